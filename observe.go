package bosun

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The kinds of trigger (Trigger.Kind).
const (
	// triggerWatch: an event of a watched object (the reconciled object
	// itself, an owned child, or a related object mapped by a handler).
	triggerWatch = "Watch"
	// triggerRequeue: the engine asked for the pass, after an error
	// (backoff), a conflict or a step's RequeueAfter.
	triggerRequeue = "Requeue"
	// triggerResync: the reconciler's periodic resync (Reconciler.Resync or
	// the AnnotationResyncInterval annotation).
	triggerResync = "Resync"
	// triggerRequested: a user asked for a pass through the
	// AnnotationReconcileRequestedAt annotation.
	triggerRequested = "Requested"
	// triggerEnqueued: code put the key in the queue through an Enqueuer.
	triggerEnqueued = "Enqueued"
	// triggerUnknown: no cause was recorded for the pass (an informer
	// resync, a source bosun does not see into).
	triggerUnknown = "Unknown"
)

// Trigger is why a pass ran. Pass.Trigger carries it to the steps; the
// engine logs it, puts it on the pass's trace span and reports it to the
// PassObservers.
type Trigger struct {
	// Kind is the kind of cause:
	//
	//   - "Watch": an event of a watched object (the reconciled object
	//     itself, an owned child, or a related object mapped by a handler);
	//   - "Requeue": the engine asked for the pass, after an error
	//     (backoff), a conflict or a step's RequeueAfter;
	//   - "Resync": the periodic resync (Reconciler.Resync or the
	//     AnnotationResyncInterval annotation);
	//   - "Requested": a user asked for a pass through the
	//     AnnotationReconcileRequestedAt annotation;
	//   - "Enqueued": code put the key in the queue through an Enqueuer;
	//   - "Unknown": no cause was recorded (an informer resync, a source
	//     bosun does not see into).
	Kind string
	// Source names the watch, for a watch: "For", "Owns" or
	// "Watches", as registered on the Builder.
	Source string `json:",omitempty"`
	// Event is the watch event, for a watch: "Create", "Update",
	// "Delete" or "Generic".
	Event string `json:",omitempty"`
	// GVK is the kind of the object whose event brought the pass, for
	// triggerWatch.
	GVK schema.GroupVersionKind `json:",omitempty"`
	// Object is the namespace and name of that object, for a watch.
	Object types.NamespacedName `json:",omitempty"`
}

// String gives the trigger in a few words, as logs show it: "Watch Update
// apps/v1, Kind=Deployment default/web (Owns)", "Requeue".
func (t Trigger) String() string {
	if t.Kind != triggerWatch {
		return t.Kind
	}
	s := t.Kind
	if t.Event != "" {
		s += " " + t.Event
	}
	if !t.GVK.Empty() {
		s += " " + t.GVK.String()
	}
	if t.Object.Name != "" {
		s += " " + t.Object.String()
	}
	if t.Source != "" {
		s += " (" + t.Source + ")"
	}
	return s
}

// StepReport is what the engine reports of one step of a pass.
type StepReport struct {
	// Name is the step's name (StepName).
	Name string
	// Phase is the step's method that ran, as the metrics name it:
	// "claim", "do", "observe", "cleanup" or "post".
	Phase string
	// Start is when it started, Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Result is what it returned.
	Result ctrl.Result
	// Error is the error it returned or the panic it raised, as text; empty
	// when it succeeded.
	Error string `json:",omitempty"`
}

// PassReport is what the engine reports of one pass to the PassObservers,
// once the pass has ended.
type PassReport struct {
	// Controller is the reconciler's name.
	Controller string
	// Object is the reconciled object's namespace and name.
	Object types.NamespacedName
	// Trigger is why the pass ran.
	Trigger Trigger
	// Start is when the pass started, Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Steps are the steps that ran, in the order they ran.
	Steps []StepReport
	// Result is the pass's result.
	Result ctrl.Result
	// Error is the pass's error as text; empty when it succeeded.
	Error string `json:",omitempty"`
	// Conditions are the object's status conditions at the end of the pass
	// (none when its type keeps none, or the object is gone).
	Conditions []metav1.Condition `json:",omitempty"`
	// TraceID is the OpenTelemetry trace id of the pass, when tracing is on.
	TraceID string `json:",omitempty"`
}

// PassObserver is told of every pass a reconciler runs. ObservePass runs on
// the reconciler's worker after the pass: it must be quick and must not
// keep the report's slices beyond the call without copying them.
type PassObserver interface {
	ObservePass(ctx context.Context, report PassReport)
}

// PassObserverFunc adapts a function to a PassObserver.
type PassObserverFunc func(ctx context.Context, report PassReport)

// ObservePass calls f.
func (f PassObserverFunc) ObservePass(ctx context.Context, report PassReport) { f(ctx, report) }

// ReconcilerInfo describes a reconciler that a Builder set up on a manager.
type ReconcilerInfo struct {
	// Name is the reconciler's name.
	Name string
	// GVK is the kind it reconciles.
	GVK schema.GroupVersionKind
	// Graph draws its steps.
	Graph func() Graph
	// PolicyRules derives the RBAC rules it needs (see
	// Reconciler.PolicyRules).
	PolicyRules func(*runtime.Scheme) ([]rbacv1.PolicyRule, error)
}

// Observation holds what is shared between the reconcilers set up on one
// manager and the tools that watch them (a debug page): the observers of
// every pass, and the reconcilers themselves. It lives on the manager:
// Attach makes a manager that carries it, and ObservationOf finds it
// there. The zero value is ready to use.
type Observation struct {
	// Build names the build of the operator the manager runs, which the
	// reconcilers set up on it record on their objects unless their own
	// Options.Build says otherwise (see Options.Build). Package operator
	// sets it from the binary's version; an operator that knows its
	// version otherwise (set at link time, say) sets it in its setup,
	// before its controllers: a Builder reads it when it completes.
	Build string
	// AllowMassDeletion turns the mass-deletion breaker off for every
	// reconciler set up on the manager (see MassDeletion.Allow). Package
	// operator sets it from --allow-mass-deletion.
	AllowMassDeletion bool

	mu sync.Mutex
	// observers is replaced, never changed, so that passes read it
	// without a lock.
	observers   atomic.Pointer[[]PassObserver]
	reconcilers []ReconcilerInfo
}

// Attach returns mgr carrying o: every Reconciler that a Builder
// completes on the returned manager reports its passes to o's observers
// (added before or after the reconciler was set up) and is listed by
// Reconcilers. Package operator attaches one to the managers it makes, and
// package bosuntest to those of RunManager. A wrapper of the returned
// manager keeps o when it has a method Observation() *Observation that
// returns ObservationOf of the manager it wraps, as bosuntest's
// ManagerWithClient and ManagerWithLogger do.
func (o *Observation) Attach(mgr ctrl.Manager) ctrl.Manager {
	return observedManager{Manager: mgr, observation: o}
}

// observedManager is a manager that carries an Observation.
type observedManager struct {
	ctrl.Manager
	observation *Observation
}

// Observation returns the manager's Observation.
func (m observedManager) Observation() *Observation { return m.observation }

// ObservationOf returns the Observation mgr carries (see Attach), or nil
// when it carries none: the reconcilers set up on such a manager report
// their passes only to their own Options.Observers.
func ObservationOf(mgr ctrl.Manager) *Observation {
	if m, ok := mgr.(interface{ Observation() *Observation }); ok {
		return m.Observation()
	}
	return nil
}

// AddObserver adds an observer of every pass of the manager's reconcilers.
// It panics on a nil Observation (ObservationOf of a manager that carries
// none), whose observers would never be told of a pass.
func (o *Observation) AddObserver(obs PassObserver) {
	if o == nil {
		panic("bosun: AddObserver on a nil Observation: attach one to the manager with Observation.Attach")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var obss []PassObserver
	if old := o.observers.Load(); old != nil {
		obss = append(obss, *old...)
	}
	obss = append(obss, obs)
	o.observers.Store(&obss)
}

// active reports whether o has an observer.
func (o *Observation) active() bool {
	if o == nil {
		return false
	}
	obs := o.observers.Load()
	return obs != nil && len(*obs) > 0
}

// Reconcilers returns the reconcilers set up on the manager, in the order
// they were set up.
func (o *Observation) Reconcilers() []ReconcilerInfo {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]ReconcilerInfo(nil), o.reconcilers...)
}

// addReconciler lists a reconciler set up on the manager.
func (o *Observation) addReconciler(info ReconcilerInfo) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reconcilers = append(o.reconcilers, info)
}

// observePass tells every observer of the manager of a pass.
func (o *Observation) observePass(ctx context.Context, report PassReport) {
	if o == nil {
		return
	}
	obs := o.observers.Load()
	if obs == nil {
		return
	}
	for _, ob := range *obs {
		ob.ObservePass(ctx, report)
	}
}

// stepLog collects the StepReports of a pass, whose steps may run
// concurrently (ParallelJoin). A nil stepLog collects nothing.
type stepLog struct {
	mu    sync.Mutex
	steps []StepReport
}

// begin reserves the place of a step that starts now, in start order, and
// returns it; -1 for a nil stepLog.
func (l *stepLog) begin(name string, phase phase, start time.Time) int {
	if l == nil {
		return -1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, StepReport{Name: name, Phase: phase, Start: start})
	return len(l.steps) - 1
}

// end records how the step at i ended.
func (l *stepLog) end(i int, d time.Duration, res ctrl.Result, err error) {
	if l == nil || i < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.steps[i]
	s.Duration, s.Result = d, res
	if err != nil {
		s.Error = err.Error()
	}
}

// reports returns the steps recorded.
func (l *stepLog) reports() []StepReport {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.steps)
}
