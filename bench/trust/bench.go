package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bench/internal/procstat"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/trust"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// config is the size of the rows.
type config struct {
	namespaces, bundles, bundleNamespaces, newNamespaces, certs, rounds int
	idle, timeout                                                       time.Duration
	// arms names the arms to run; the ratios need both.
	arms []string
}

// arm is one operator: its name and binary. Both get the same arguments.
type arm struct{ name, bin string }

// trustNamespace is the trust namespace of both operators.
const trustNamespace = "cert-manager"

// The rows, in the order a run goes through them.
var rows = []string{"1 Bundle x N namespaces", "M Bundles x K namespaces", "source change", "new namespaces", "idle", "restart"}

// measure is what one row of one run measured.
type measure struct {
	// sync is the time from the change to every target holding the
	// bundle; for idle and restart, the window watched.
	sync time.Duration
	// cpu is the operator's CPU time, apiCPU kube-apiserver's and etcd's.
	cpu, apiCPU time.Duration
	// heap is the operator's live heap at the end of the row.
	heap float64
	// writes are the operator's writes, by "VERB resource".
	writes map[string]float64
}

// total is the sum of m's writes.
func (m measure) total() float64 {
	t := 0.0
	for _, v := range m.writes {
		t += v
	}
	return t
}

// run builds both operators and runs cfg.rounds rounds of every arm.
func run(ctx context.Context, cfg config, out io.Writer) error {
	version, err := trustManagerVersion()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "building trust-manager %s and the port\n", version)
	tm, err := buildTrustManager(ctx, version)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-trust-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	port, err := buildPort(ctx, tmp)
	if err != nil {
		return err
	}
	arms := slices.DeleteFunc([]arm{{"bosun", port}, {"trust-manager", tm}}, func(a arm) bool { return !slices.Contains(cfg.arms, a.name) })
	results := map[string][]map[string]measure{}
	for round := range cfg.rounds {
		order := slices.Clone(arms)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, a := range order {
			fmt.Fprintf(out, "round %d: %s\n", round+1, a.name)
			r, err := runArm(ctx, cfg, a, tmp, out)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, a.name, err)
			}
			results[a.name] = append(results[a.name], r)
		}
	}
	report(out, cfg, results)
	return lines(ctx, out)
}

// runArm runs every row once with operator a, on a control plane of its
// own.
func runArm(ctx context.Context, cfg config, a arm, tmp string, out io.Writer) (map[string]measure, error) {
	scheme := controlplane.NewScheme()
	if err := trust.AddToScheme(scheme); err != nil {
		return nil, err
	}
	crds, err := trust.CRDs()
	if err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Scheme: scheme, CRDs: crds})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.Stop() }()
	b := &bench{cfg: cfg, cp: cp, c: cp.Client, servers: procstat.ServerPIDs(), out: out}
	b.kubeconfig = filepath.Join(tmp, a.name+".kubeconfig")
	if err := cp.WriteKubeconfig(b.kubeconfig); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	b.targets, err = watchTargets(ctx, cs)
	if err != nil {
		return nil, err
	}
	defer b.targets.stop()

	// The cluster before the operator: the trust namespace and its
	// source, N namespaces, K of them labelled for the M Bundles.
	if err := b.namespace(ctx, trustNamespace, nil); err != nil {
		return nil, err
	}
	b.certs = make([]string, cfg.certs)
	for i := range b.certs {
		if b.certs[i], err = newCA(fmt.Sprintf("bench CA %d", i)); err != nil {
			return nil, err
		}
	}
	if err := b.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: "source"}, Data: map[string]string{"ca.crt": strings.Join(b.certs, "")}}); err != nil {
		return nil, err
	}
	if err := parallel(cfg.namespaces, func(i int) error {
		var lbls map[string]string
		if i < cfg.bundleNamespaces {
			lbls = map[string]string{"bench": "selected"}
		}
		return b.namespace(ctx, fmt.Sprintf("ns-%05d", i), lbls)
	}); err != nil {
		return nil, err
	}
	op, err := b.start(ctx, a, tmp)
	if err != nil {
		return nil, err
	}
	defer op.stop()

	res := map[string]measure{}
	all := func() (int, error) { return b.countNamespaces(ctx) }
	// Row 1: one Bundle into every namespace.
	res[rows[0]], err = b.row(ctx, op, map[string]float64{"POST bundles": 1}, func() (int, error) {
		if err := b.c.Create(ctx, bundle("all", nil)); err != nil {
			return 0, err
		}
		return all()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rows[0], err)
	}
	// Row 2: M Bundles into the K selected namespaces.
	res[rows[1]], err = b.row(ctx, op, map[string]float64{"POST bundles": float64(cfg.bundles)}, func() (int, error) {
		if err := parallel(cfg.bundles, func(i int) error {
			return b.c.Create(ctx, bundle(fmt.Sprintf("selected-%03d", i), &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "selected"}}))
		}); err != nil {
			return 0, err
		}
		n, err := all()
		return n + cfg.bundles*cfg.bundleNamespaces, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rows[1], err)
	}
	// Row 3: a certificate added to the source reaches every target.
	res[rows[2]], err = b.row(ctx, op, map[string]float64{"PUT configmaps": 1}, func() (int, error) {
		extra, err := newCA("bench CA added")
		if err != nil {
			return 0, err
		}
		b.certs = append(b.certs, extra)
		cm := &corev1.ConfigMap{}
		if err := b.c.Get(ctx, client.ObjectKey{Namespace: trustNamespace, Name: "source"}, cm); err != nil {
			return 0, err
		}
		cm.Data["ca.crt"] = strings.Join(b.certs, "")
		if err := b.c.Update(ctx, cm); err != nil {
			return 0, err
		}
		n, err := all()
		return n + cfg.bundles*cfg.bundleNamespaces, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rows[2], err)
	}
	// Row 4: new namespaces, which only the first Bundle selects.
	res[rows[3]], err = b.row(ctx, op, nil, func() (int, error) {
		if err := parallel(cfg.newNamespaces, func(i int) error {
			return b.namespace(ctx, fmt.Sprintf("new-%05d", i), nil)
		}); err != nil {
			return 0, err
		}
		n, err := all()
		return n + cfg.bundles*cfg.bundleNamespaces, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rows[3], err)
	}
	// Row 5: nothing changes.
	res[rows[4]] = b.window(ctx, op, cfg.idle)
	// Row 6: the operator starts again over a synced cluster.
	op.stop()
	if op, err = b.start(ctx, a, tmp); err != nil {
		return nil, err
	}
	res[rows[5]] = b.window(ctx, op, cfg.idle)
	for _, r := range rows {
		m := res[r]
		fmt.Fprintf(out, "  %-26s sync %8s  cpu %8s  api-cpu %8s  heap %8.1f MiB  writes %6.0f  %s\n", r, m.sync.Round(time.Millisecond), m.cpu, m.apiCPU, m.heap/(1<<20), m.total(), byVerb(m.writes))
	}
	return res, nil
}

// bench is one run on one control plane.
type bench struct {
	cfg        config
	cp         *controlplane.ControlPlane
	c          client.Client
	kubeconfig string
	servers    []int
	out        io.Writer
	targets    *targets
	// certs are the PEM certificates of the source, which every target
	// must hold.
	certs []string
}

// row runs change, which makes the cluster's Bundles want the number of
// targets it returns, and measures until that many targets hold the
// source's certificates. own are the writes change makes, by "VERB
// resource", which are not the operator's.
func (b *bench) row(ctx context.Context, op *operator, own map[string]float64, change func() (int, error)) (measure, error) {
	cpu0, api0, req0, start := op.cpu(), procstat.CPU(b.servers...), procstat.ServerRequests(ctx, b.cp.Config), time.Now()
	want, err := change()
	if err != nil {
		return measure{}, err
	}
	print := fingerprint(strings.Join(b.certs, ""))
	deadline := time.Now().Add(b.cfg.timeout)
	for {
		if err := op.alive(); err != nil {
			return measure{}, err
		}
		have := b.targets.holding(print)
		if have == want {
			break
		}
		if time.Now().After(deadline) {
			return measure{}, fmt.Errorf("%d targets of %d synced after %s", have, want, b.cfg.timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := measure{sync: time.Since(start)}
	// The writes of the passes the last targets' events bring.
	time.Sleep(2 * time.Second)
	m.cpu, m.apiCPU = op.cpu()-cpu0, procstat.CPU(b.servers...)-api0
	m.writes = operatorWrites(procstat.RequestsSince(req0, procstat.ServerRequests(ctx, b.cp.Config)), own)
	m.heap = op.heap(ctx)
	return m, nil
}

// window measures the operator for d, while nothing changes.
func (b *bench) window(ctx context.Context, op *operator, d time.Duration) measure {
	cpu0, api0, req0 := op.cpu(), procstat.CPU(b.servers...), procstat.ServerRequests(ctx, b.cp.Config)
	time.Sleep(d)
	return measure{
		sync: d, cpu: op.cpu() - cpu0, apiCPU: procstat.CPU(b.servers...) - api0,
		writes: operatorWrites(procstat.RequestsSince(req0, procstat.ServerRequests(ctx, b.cp.Config)), nil),
		heap:   op.heap(ctx),
	}
}

// operatorWrites keeps the writes of reqs to what the operators write,
// less the bench's own.
func operatorWrites(reqs, own map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range reqs {
		verb, resource, _ := strings.Cut(k, " ")
		if !slices.Contains([]string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}, verb) {
			continue
		}
		if !slices.Contains([]string{"configmaps", "secrets", "bundles", "bundles/status", "events"}, resource) {
			continue
		}
		out[k] = v
	}
	for k, v := range own {
		out[k] -= v
	}
	for k, v := range out {
		if v <= 0 {
			delete(out, k)
		}
	}
	return out
}

// byVerb formats writes as "VERB resource:n" pairs, the most first.
func byVerb(writes map[string]float64) string {
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range writes {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int {
		if writes[a] != writes[b] {
			if writes[a] > writes[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%.0f", strings.ReplaceAll(k, " ", "_"), writes[k])
	}
	return strings.Join(parts, ",")
}

// namespace makes namespace name with lbls.
func (b *bench) namespace(ctx context.Context, name string, lbls map[string]string) error {
	err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// countNamespaces counts the namespaces.
func (b *bench) countNamespaces(ctx context.Context) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := b.c.List(ctx, list); err != nil {
		return 0, err
	}
	return len(list.Items), nil
}

// bundle is a Bundle of the source into a ConfigMap of each namespace sel
// selects (every namespace when nil).
func bundle(name string, sel *metav1.LabelSelector) *trustv1alpha1.Bundle {
	return &trustv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "source", Key: "ca.crt"}}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}, NamespaceSelector: sel},
		},
	}
}

// targets follows the target ConfigMaps of every Bundle (labelled
// trust.cert-manager.io/bundle), keeping of each only the fingerprint of
// the certificates it holds.
type targets struct {
	store toolscache.Store
	stop  func()
}

// watchTargets starts following the targets.
func watchTargets(ctx context.Context, cs kubernetes.Interface) (*targets, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = trustv1alpha1.LabelBundle
	}))
	inf := f.Core().V1().ConfigMaps().Informer()
	if err := inf.SetTransform(func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return obj, nil
		}
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}, Data: map[string]string{"print": fingerprint(cm.Data["ca.pem"])}}, nil
	}); err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, errors.New("the bench's watch of the targets did not sync")
	}
	return &targets{store: inf.GetStore(), stop: func() { cancel(); f.Shutdown() }}, nil
}

// holding counts the targets whose certificates have fingerprint print.
func (t *targets) holding(print string) int {
	n := 0
	for _, obj := range t.store.List() {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["print"] == print {
			n++
		}
	}
	return n
}

// fingerprint is a digest of the set of certificates in bundle, whatever
// their order and the text around them.
func fingerprint(bundle string) string {
	var sums []string
	rest := []byte(bundle)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		s := sha256.Sum256(block.Bytes)
		sums = append(sums, hex.EncodeToString(s[:]))
	}
	slices.Sort(sums)
	s := sha256.Sum256([]byte(strings.Join(sums, ",")))
	return hex.EncodeToString(s[:])
}

// newCA returns the PEM of a new self-signed CA certificate named cn.
func newCA(cn string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// parallel runs fn for 0..n-1, 16 at a time, and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// operator is a running operator process.
type operator struct {
	cmd     *exec.Cmd
	done    chan error
	metrics int
	log     string
}

// start runs a's binary with trust-manager's arguments (the same for
// both) against the bench's control plane, and waits for its readiness
// probe.
func (b *bench) start(ctx context.Context, a arm, tmp string) (*operator, error) {
	metrics, probe, hooks, err := freePorts()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + b.kubeconfig,
		"--leader-elect=false",
		"--trust-namespace=" + trustNamespace,
		"--metrics-port=" + strconv.Itoa(metrics),
		"--readiness-probe-port=" + strconv.Itoa(probe),
		"--webhook-host=127.0.0.1",
		"--webhook-port=" + strconv.Itoa(hooks),
		"--webhook-certificate-dir=" + b.cp.WebhookServer.CertDir,
	}
	log := filepath.Join(tmp, a.name+".log")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(a.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", a.name, err)
	}
	op := &operator{cmd: cmd, done: make(chan error, 1), metrics: metrics, log: log}
	go func() { op.done <- cmd.Wait(); f.Close() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := op.alive(); err != nil {
			return nil, err
		}
		if err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", probe), nil); err == nil {
			return op, nil
		}
		if time.Now().After(deadline) {
			op.stop()
			return nil, fmt.Errorf("%s not ready after 2 minutes; its log:\n%s", a.name, tail(log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive fails if the operator has exited.
func (o *operator) alive() error {
	select {
	case err := <-o.done:
		o.done <- err
		return fmt.Errorf("the operator exited (%w); its log:\n%s", err, tail(o.log))
	default:
		return nil
	}
}

// stop stops the operator with SIGTERM, or kills it after 30 seconds.
func (o *operator) stop() {
	if o.cmd.ProcessState != nil {
		return
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-o.done:
		o.done <- err
	case <-time.After(30 * time.Second):
		_ = o.cmd.Process.Kill()
		o.done <- <-o.done
	}
}

// cpu is the operator's CPU time so far.
func (o *operator) cpu() time.Duration { return procstat.CPU(o.cmd.Process.Pid) }

// heap is the operator's live heap after its last garbage collection
// (go_gc_heap_live_bytes), or its heap in use when that is not served.
func (o *operator) heap(ctx context.Context) float64 {
	values := map[string]float64{}
	err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", o.metrics), func(line string) {
		for _, name := range []string{"go_gc_heap_live_bytes", "go_memstats_heap_inuse_bytes"} {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				values[name], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
	})
	if err != nil {
		return 0
	}
	if v, ok := values["go_gc_heap_live_bytes"]; ok {
		return v
	}
	return values["go_memstats_heap_inuse_bytes"]
}

// get fails unless url answers 200, and hands each line of its body to
// line when it is not nil.
func get(ctx context.Context, url string, line func(string)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if line != nil {
		s := bufio.NewScanner(resp.Body)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			line(s.Text())
		}
		return s.Err()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// freePorts returns three free TCP ports of the loopback interface.
func freePorts() (a, b, c int, err error) {
	var ports [3]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, 0, err
		}
		defer l.Close()
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return 0, 0, 0, fmt.Errorf("%s is not a TCP address", l.Addr())
		}
		ports[i] = addr.Port
	}
	return ports[0], ports[1], ports[2], nil
}

// tail is the last lines of the file at path.
func tail(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
