package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// widgetField is the field index of ConfigMaps by the Widget they are for.
const widgetField = "widget"

// mirror is a step that keeps a ConfigMap per Widget, found through a field
// index, and wires itself: it owns ConfigMaps and registers the index.
type mirror struct{ name string }

func (m mirror) Name() string { return m.name }

func (m mirror) SetupWithBuilder(b *bosun.Builder[*testapi.Widget]) error {
	b.Owns(&corev1.ConfigMap{}).IndexField(&corev1.ConfigMap{}, widgetField, func(o client.Object) []string {
		if w := o.GetLabels()[widgetField]; w != "" {
			return []string{w}
		}
		return nil
	})
	return nil
}

func (m mirror) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	var list corev1.ConfigMapList
	if err := req.Client.List(ctx, &list, client.InNamespace(w.Namespace), client.MatchingFields{widgetField: w.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the mirrors: %w", err)
	}
	w.Status.Result = int64(len(list.Items))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-" + m.name, Labels: map[string]string{widgetField: w.Name}}}
	for _, item := range list.Items {
		if item.Name == cm.Name {
			return ctrl.Result{}, nil
		}
	}
	if err := controllerutil.SetControllerReference(w, cm, req.Client.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := req.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating the mirror: %w", err)
	}
	return ctrl.Result{}, nil
}

// TestStepsWireThemselves checks that Complete lets every step of the tree,
// one inside a composite too, register its watches and indexes; that two
// steps owning the same kind and indexing the same field are fine; and that
// what they registered works: the index answers, and deleting an owned
// ConfigMap brings a reconcile that makes it again.
func TestStepsWireThemselves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:  "self-wiring",
		Steps: []bosun.Step[*testapi.Widget]{bosun.Join[*testapi.Widget](mirror{name: "one"}), mirror{name: "two"}},
	}, runOptions{})
	f.create("w", 1, 1, nil)
	// The second mirror lists both ConfigMaps by the index, once the
	// cache has them and a watch event of one brought another pass.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if w.Status.Result != 2 {
			return fmt.Errorf("the second mirror listed %d ConfigMaps by the index, want 2", w.Status.Result)
		}
		return nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "w-one"}}
	if err := f.c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var got corev1.ConfigMap
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
			return err
		}
		if got.UID == "" || got.DeletionTimestamp != nil {
			return errors.New("not made again yet")
		}
		return nil
	})
}

// TestFieldIndexes checks that the field indexes the steps of the tree set
// up are found without a manager, once per kind and field, and that the
// in-memory client of package bosuntest/unit answers them: the second
// mirror lists the ConfigMap the client was given and the one the first
// mirror made.
func TestFieldIndexes(t *testing.T) {
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  "indexes",
		Steps: []bosun.Step[*testapi.Widget]{bosun.Join[*testapi.Widget](mirror{name: "one"}), mirror{name: "two"}},
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, testapi.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	indexes, err := r.FieldIndexes(scheme)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, ix := range indexes {
		fields = append(fields, fmt.Sprintf("%T %s", ix.Object, ix.Field))
	}
	if diff := cmp.Diff([]string{"*v1.ConfigMap widget"}, fields); diff != "" {
		t.Errorf("field indexes (-want +got):\n%s", diff)
	}

	given := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "given", Labels: map[string]string{widgetField: "w"}}}
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	out := unit.Reconcile(t, scheme, r, unit.Case[*testapi.Widget]{Name: "indexed", Object: w, Given: []client.Object{given}})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if out.Object.Status.Result != 2 {
		t.Errorf("the second mirror listed %d ConfigMaps by the index, want 2", out.Object.Status.Result)
	}

	bad := &bosun.Reconciler[*testapi.Widget]{Name: "bad", Steps: []bosun.Step[*testapi.Widget]{mirror{name: "one"}}}
	if _, err := bad.FieldIndexes(runtime.NewScheme()); err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("FieldIndexes with a scheme that lacks ConfigMap: error %v, want one naming ConfigMap", err)
	}
}

// TestSetupErrors checks that a step's setup error, and one the Builder
// meets for it, stop Complete with the step named.
func TestSetupErrors(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		err := bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(&bosun.Reconciler[*testapi.Widget]{
			Name:  "setup-error",
			Steps: []bosun.Step[*testapi.Widget]{failingSetup{}},
		})
		if err == nil || !strings.Contains(err.Error(), `setting up step "failingSetup": no watch for you`) {
			t.Errorf("Complete = %v, want the step's setup error", err)
		}
		err = bosun.ControllerManagedBy[*testapi.Widget](mgr).Owns(&unknownKind{}).Complete(&bosun.Reconciler[*testapi.Widget]{
			Name:  "unknown-kind",
			Steps: []bosun.Step[*testapi.Widget]{bosun.Nop[*testapi.Widget]{}},
		})
		if err == nil || !strings.Contains(err.Error(), "owning *bosun_test.unknownKind") {
			t.Errorf("Complete = %v, want the unknown kind refused", err)
		}
		return nil
	})
}

type failingSetup struct{ bosun.Nop[*testapi.Widget] }

func (failingSetup) SetupWithBuilder(*bosun.Builder[*testapi.Widget]) error {
	return errors.New("no watch for you")
}

// unknownKind is a kind no scheme knows.
type unknownKind struct{ corev1.ConfigMap }

func (u *unknownKind) DeepCopyObject() runtime.Object {
	return &unknownKind{ConfigMap: *u.DeepCopy()}
}

// TestSchemeWithoutNamespace checks that a manager whose scheme has no
// core/v1 types still honours a Namespace's reconcile policy: the engine
// reads and watches only the metadata of Namespaces, which needs no Go
// type.
func TestSchemeWithoutNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setNamespacePolicy(string(bosun.PolicySkip))
	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "no-core-scheme", Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{bosun.Nop[*testapi.Widget]{}}}
	opts := bosuntest.ManagerOptions{Namespaces: []string{f.ns}, Configure: func(o *ctrl.Options) { o.Scheme = scheme }}
	bosuntest.RunManagerWith(t, f.cp, opts, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(r)
	})
	f.create("skipped", 6, 3, nil)
	f.waitReady("skipped", metav1.ConditionFalse, conditions.ReasonReconcilePaused)
	w, err := f.get(context.Background(), "skipped")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Finalizers) != 0 {
		t.Errorf("finalizers %v under the Namespace's skip policy, want none", w.Finalizers)
	}

	// A change of the Namespace's policy reaches the object through the
	// metadata watch.
	f.setNamespacePolicy(string(bosun.PolicyManage))
	f.waitReady("skipped", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// TestRoleOnlyOperator runs an operator as a user whose only permissions
// are a Role in one namespace: with IgnoreNamespacePolicy it reads no
// Namespace, and it reconciles, cleans up and records events there.
func TestRoleOnlyOperator(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	user := "role-only-" + f.ns
	f.bindRole(user,
		rbacv1.PolicyRule{APIGroups: []string{testapi.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{testapi.GroupVersion.Group}, Resources: []string{"widgets/status", "widgets/finalizers"}, Verbs: []string{"update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	)
	r := newReconciler("role-only", newJournal(), true)
	r.Options.IgnoreNamespacePolicy = true
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{User: user, Namespaces: []string{f.ns}}, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(r)
	})
	w := f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitSecret("w")
	if err := f.c.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
}

// TestBuilderPassesControllerRuntimeOptions checks the options the Builder
// hands to controller-runtime's: an event filter drops what it refuses, a
// raw source brings requests of its own, and Build returns the controller.
func TestBuilderPassesControllerRuntimeOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	requests := make(chan event.TypedGenericEvent[*testapi.Widget], 1)
	bosuntest.RunManager(t, f.cp, func(mgr ctrl.Manager) error {
		c, err := bosun.ControllerManagedBy[*testapi.Widget](mgr).
			WithEventFilter(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == f.ns && o.GetName() != "filtered"
			})).
			WatchesRawSource(source.Channel(requests, &handler.TypedEnqueueRequestForObject[*testapi.Widget]{})).
			Build(newReconciler("builder-options", j, false))
		if err == nil && c == nil {
			return errors.New("Build returned no controller")
		}
		return err
	})
	f.create("kept", 6, 3, nil)
	filtered := f.create("filtered", 6, 3, nil)
	f.waitReady("kept", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if got, err := f.get(t.Context(), "filtered"); err != nil || len(got.Status.Conditions) != 0 {
		t.Errorf("the filtered Widget was reconciled: %+v, %v", got.Status, err)
	}
	// A raw source's event is not filtered by the event filter's own
	// source: controller-runtime applies WithEventFilter to the watches
	// of kinds only.
	requests <- event.TypedGenericEvent[*testapi.Widget]{Object: filtered}
	f.waitReady("filtered", metav1.ConditionTrue, conditions.ReasonSucceeded)
}
