package faults

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForeignLostAcrossProcesses checks what an object must keep when the
// foreign writes of two processes of one operator went to it: the value
// of the one the API server applied last, whichever process made it. The
// second process's write here was made later (a greater value) but
// applied first (a smaller resourceVersion); an object that holds the
// first process's value kept the change, one that holds an older value
// lost it.
func TestForeignLostAcrossProcesses(t *testing.T) {
	const path = "/apis/test.bosun.dev/v1/namespaces/lost-across/widgets/w"
	for _, tc := range []struct {
		name string
		has  string
		want []string
	}{
		{name: "kept the write applied last", has: "5"},
		{name: "kept a later write still on its way", has: "9"},
		{name: "lost it", has: "4", want: []string{path + `: annotation faults.bosun.dev/foreign is "4", another actor set "5"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != path {
					http.NotFound(w, r)
					return
				}
				fmt.Fprintf(w, `{"metadata":{"uid":"u1","annotations":{%q:%q}}}`, foreignAnnotation, tc.has)
			}))
			defer srv.Close()
			first, second := &Process{}, &Process{}
			for _, p := range []*Process{first, second} {
				p.foreign.client, p.foreign.host, p.foreign.paths = srv.Client(), srv.URL, map[string]bool{path: true}
			}
			foreignMarks.Lock()
			delete(foreignMarks.byPath, path)
			foreignMarks.Unlock()
			markForeign(foreignMark{path: path, uid: "u1", value: "5", version: 11})
			markForeign(foreignMark{path: path, uid: "u1", value: "7", version: 10})
			for _, p := range []*Process{first, second} {
				lost, err := p.ForeignLost(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, lost); diff != "" {
					t.Errorf("ForeignLost (-want +got):\n%s", diff)
				}
			}
		})
	}
}
