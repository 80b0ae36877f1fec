package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// foreignWriter makes the foreign writes of a process's plan through a
// connection of its own, and remembers the objects it wrote to.
type foreignWriter struct {
	client *http.Client
	host   string

	mu    sync.Mutex
	tries int // writes that could have been preceded by one
	n     int // foreign writes made
	paths map[string]bool
}

// foreignMarks are the last foreign write to each object, by its URL
// path, whichever process made it: the processes of an operator write to
// the same objects, and what an object must keep is the foreign write the
// API server applied last, of any of them.
var foreignMarks struct {
	sync.Mutex
	byPath map[string]foreignMark
}

// foreignValues numbers the foreign writes of every process in the order
// they are made, so that a later write always sets a greater value.
var foreignValues atomic.Int64

// markForeign records a foreign write that took effect, unless a foreign
// write to the same object that the API server applied later is recorded.
func markForeign(m foreignMark) {
	foreignMarks.Lock()
	defer foreignMarks.Unlock()
	if foreignMarks.byPath == nil {
		foreignMarks.byPath = map[string]foreignMark{}
	}
	if old, ok := foreignMarks.byPath[m.path]; ok && old.uid == m.uid && old.version > m.version {
		return
	}
	foreignMarks.byPath[m.path] = m
}

// foreignMark is the last foreign write to an object.
type foreignMark struct {
	path  string // the object's URL path
	uid   types.UID
	value string
	// version is the resourceVersion the write gave the object: of two
	// foreign writes in flight at once, the later one to take effect
	// decides what the object must still hold.
	version uint64
}

// init makes the foreign writer's connection from the process's base
// configuration.
func (f *foreignWriter) init(base *rest.Config) error {
	c, err := rest.HTTPClientFor(rest.CopyConfig(base))
	if err != nil {
		return fmt.Errorf("faults: a connection for foreign writes: %w", err)
	}
	f.client, f.host = c, base.Host
	return nil
}

// count returns how many foreign writes were made.
func (f *foreignWriter) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// write makes the foreign write fw asks for before req, if any: req must
// be an update or patch of a named object. seed is the plan's.
func (f *foreignWriter) write(req *http.Request, info requestInfo, fw ForeignWrites, seed uint64) {
	switch {
	case fw.Rate <= 0 || info.name == "" || info.bookkeeping():
		return
	case info.verb != verbUpdate && info.verb != verbPatch && info.verb != verbApply:
		return
	case len(fw.Resources) > 0 && !slices.Contains(fw.Resources, info.resource):
		return
	}
	path := req.URL.Path
	if info.subresource != "" {
		path = strings.TrimSuffix(path, "/"+info.subresource)
	}
	f.mu.Lock()
	f.tries++
	try := f.tries
	f.mu.Unlock()
	if chance(seed, "foreign", info.verb, info.resourcePath(), info.name, strconv.Itoa(try)) >= fw.Rate {
		return
	}
	value := strconv.FormatInt(foreignValues.Add(1), 10)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, foreignAnnotation, value)
	u := *req.URL
	u.Path, u.RawQuery = path, ""
	freq, err := http.NewRequestWithContext(context.WithoutCancel(req.Context()), http.MethodPatch, u.String(), strings.NewReader(patch))
	if err != nil {
		return
	}
	freq.Header.Set("Content-Type", "application/merge-patch+json")
	freq.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(freq)
	if err != nil {
		return
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	var written struct {
		Metadata struct {
			UID             types.UID `json:"uid"`
			ResourceVersion string    `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &written) != nil {
		return
	}
	version, _ := strconv.ParseUint(written.Metadata.ResourceVersion, 10, 64)
	markForeign(foreignMark{path: path, uid: written.Metadata.UID, value: value, version: version})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.paths == nil {
		f.paths = map[string]bool{}
	}
	f.paths[path] = true
}

// atLeast reports whether the foreign value got was set by the write of
// want or by a later one (the values number the writes).
func atLeast(got, want string) bool {
	g, gerr := strconv.Atoi(got)
	w, werr := strconv.Atoi(want)
	return gerr == nil && werr == nil && g >= w
}

// lost is Process.ForeignLost.
func (f *foreignWriter) lost(ctx context.Context) ([]string, error) {
	host := f.host
	f.mu.Lock()
	paths := make([]string, 0, len(f.paths))
	for path := range f.paths {
		paths = append(paths, path)
	}
	f.mu.Unlock()
	marks := make([]foreignMark, 0, len(paths))
	foreignMarks.Lock()
	for _, path := range paths {
		marks = append(marks, foreignMarks.byPath[path])
	}
	foreignMarks.Unlock()
	var lost []string
	for _, m := range marks {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+m.path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := f.client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("faults: reading %s: %w", m.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("faults: reading %s: %s", m.path, resp.Status)
		}
		var obj struct {
			Metadata struct {
				UID         types.UID         `json:"uid"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&obj); err != nil {
			return nil, fmt.Errorf("faults: reading %s: %w", m.path, err)
		}
		if obj.Metadata.UID != m.uid {
			continue
		}
		// A later foreign write may still be on its way back: a newer
		// value of the kit's is as good as the one recorded.
		if got := obj.Metadata.Annotations[foreignAnnotation]; !atLeast(got, m.value) {
			lost = append(lost, fmt.Sprintf("%s: annotation %s is %q, another actor set %q", m.path, foreignAnnotation, got, m.value))
		}
	}
	slices.Sort(lost)
	return lost, nil
}
