// Package procstat measures what the benches compare between operators:
// the CPU time of a process, the control plane's processes, and the
// requests the API server has served, by verb and resource.
package procstat

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// ServerPIDs finds the kube-apiserver and etcd processes this process
// started.
func ServerPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < 0 {
			continue
		}
		name := s[open+1 : closing]
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 || (name != "kube-apiserver" && name != "etcd") {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// CPU is the user and system time of the processes pids so far.
func CPU(pids ...int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		total += processCPU(pid)
	}
	return total
}

// processCPU is the user and system time of process pid.
func processCPU(pid int) time.Duration {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// utime and stime are the 14th and 15th fields of stat, in clock
	// ticks of 1/100 s on Linux.
	if len(fields) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// ServerRequests returns the requests the API server of cfg has served so
// far (its metric apiserver_request_total), by verb and resource, such as
// "PATCH widgets/status"; nil when its metrics cannot be read.
func ServerRequests(ctx context.Context, cfg *rest.Config) map[string]float64 {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.NegotiatedSerializer = clientscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		sample, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(sample, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for kv := range strings.SplitSeq(labels, ",") {
			k, val, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(val, `"`)
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += v
	}
	return out
}

// RequestsSince returns the requests counted in after and not in before.
func RequestsSince(before, after map[string]float64) map[string]float64 {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
