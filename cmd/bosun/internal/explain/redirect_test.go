package explain

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// authLog records the Authorization header of each request a test server
// gets.
type authLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *authLog) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Header.Get("Authorization"))
}

func (l *authLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// TestDebugTokenStaysOnTheAskedHost: the debug page asked for over https
// answers with a redirect, to plain http, to another host over https, or to
// http on its own host. The kubeconfig's token reaches the page asked for
// and no other address: the redirect is refused, with an error that names
// the move and not the token. A redirect that stays on the host and on
// https is followed, with the token.
func TestDebugTokenStaysOnTheAskedHost(t *testing.T) {
	const token = "s3cret-debug-token"
	cfg := &rest.Config{BearerToken: token}
	gk := schema.GroupKind{Group: "test.bosun.dev", Kind: "Widget"}
	key := types.NamespacedName{Namespace: "demo", Name: "w"}

	// The targets of the redirects answer an empty index, as a debug page
	// would, so that a client that follows a redirect succeeds.
	target := func(log *authLog) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.record(r)
			_, _ = w.Write([]byte("[]"))
		})
	}
	var plainLog, otherLog authLog
	plain := httptest.NewServer(target(&plainLog))
	defer plain.Close()
	other := httptest.NewTLSServer(target(&otherLog))
	defer other.Close()
	// other is another host: the same server, named localhost rather than
	// 127.0.0.1 (both loopback, so its certificate is taken unverified).
	otherURL, err := url.Parse(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	otherURL.Host = "localhost:" + otherURL.Port()

	tests := []struct {
		name string
		// to is where the asked page redirects; "" redirects to a path of
		// its own host and scheme.
		to func(asked *url.URL) string
		// wantErr is a part of the refusal; "" means followed.
		wantErr string
	}{
		{
			name:    "to plain http on another port",
			to:      func(*url.URL) string { return plain.URL + "/debug/bosun/" },
			wantErr: "refusing a redirect",
		},
		{
			name:    "to another host over https",
			to:      func(*url.URL) string { return otherURL.String() + "/debug/bosun/" },
			wantErr: "refusing a redirect",
		},
		{
			name: "to http on the same host and port",
			to: func(asked *url.URL) string {
				return "http://" + asked.Host + "/debug/bosun/"
			},
			wantErr: "refusing a redirect",
		},
		{
			name: "to another path of the same host over https",
			to:   func(*url.URL) string { return "/moved/debug/bosun/" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var askedLog authLog
			var asked *httptest.Server
			asked = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				askedLog.record(r)
				if strings.HasPrefix(r.URL.Path, "/moved/") {
					_, _ = w.Write([]byte("[]"))
					return
				}
				u, _ := url.Parse(asked.URL)
				http.Redirect(w, r, tt.to(u), http.StatusFound)
			}))
			defer asked.Close()
			before := len(plainLog.all()) + len(otherLog.all())

			d := readDebugPage(t.Context(), Options{Config: cfg, DebugURL: asked.URL}, gk, key)

			if strings.Contains(d.Err, token) {
				t.Errorf("the error prints the token: %s", d.Err)
			}
			switch {
			case tt.wantErr == "" && d.Err != "":
				t.Errorf("a redirect on the same host over https: %s, want it followed", d.Err)
			case tt.wantErr != "" && !strings.Contains(d.Err, tt.wantErr):
				t.Errorf("error %q, want one containing %q", d.Err, tt.wantErr)
			}
			want := []string{"Bearer " + token}
			if tt.wantErr == "" {
				want = append(want, "Bearer "+token)
			}
			if diff := cmp.Diff(want, askedLog.all()); diff != "" {
				t.Errorf("Authorization headers the asked host got (-want +got):\n%s", diff)
			}
			got := append(plainLog.all(), otherLog.all()...)[before:]
			for _, h := range got {
				if strings.Contains(h, token) {
					t.Errorf("a redirect target got the token: Authorization %q", h)
				}
			}
			if tt.wantErr != "" && len(got) != 0 {
				t.Errorf("the redirect target got %d requests, want none", len(got))
			}
		})
	}
}

// TestDebugClientSendsCredentialsToTheAskedHostOnly: whatever a request of
// the debug page's client is sent to, the kubeconfig's token goes with it
// only to https on the host of the page.
func TestDebugClientSendsCredentialsToTheAskedHostOnly(t *testing.T) {
	const token = "s3cret-debug-token"
	var log authLog
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		_, _ = w.Write([]byte("[]"))
	})
	asked := httptest.NewTLSServer(handler)
	defer asked.Close()
	plain := httptest.NewServer(handler)
	defer plain.Close()
	askedURL, err := url.Parse(asked.URL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := debugClient(askedURL, &rest.Config{BearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	otherHost := *askedURL
	otherHost.Host = "localhost:" + askedURL.Port()
	plainURL, err := url.Parse(plain.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*url.URL{askedURL, &otherHost, plainURL} {
		var index []reconcilerInfo
		if err := getJSON(t.Context(), client, u, url.Values{}, &index); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if diff := cmp.Diff([]string{"Bearer " + token, "", ""}, log.all()); diff != "" {
		t.Errorf("Authorization headers: the asked host, another host, plain http (-want +got):\n%s", diff)
	}
}
