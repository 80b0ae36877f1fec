package oracle

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// minSecretLength is the length, in bytes, under which NoSecrets refuses a
// secret value: a shorter one could turn up anywhere by chance.
const minSecretLength = 6

// Errors of NoSecrets, told apart with errors.Is.
var (
	// errSecretFound is wrapped by the error of NoSecrets when a secret
	// value, or its base64 encoding, was found.
	errSecretFound = errors.New("secret values found")
	// errShortSecret is wrapped when a secret value is shorter than
	// minSecretLength.
	errShortSecret = errors.New("secret value too short to look for")
	// errNoSecrets is wrapped when every secret value given is empty, so
	// there is nothing to look for.
	errNoSecrets = errors.New("no secret values to look for")
)

// Scope says where NoSecrets looks.
type Scope struct {
	// Logs are log lines to search: their logger name, message, error text,
	// and every key and value (see NoSecretsInLogs).
	Logs []bosuntest.LogEntry
	// Namespaces are the namespaces whose Events, both events.k8s.io/v1
	// and core/v1, are searched (note or message, reason and action), and
	// in which Lists are listed. An event is searched once and named by
	// its events.k8s.io/v1 fields. Empty, nothing is read from the API
	// server.
	Namespaces []string
	// Lists are the kinds whose objects, in Namespaces, have their status,
	// annotations and labels searched. Their spec is not: a spec may
	// rightly hold what the user gave.
	Lists []client.ObjectList
}

// NoSecrets looks for each of secrets, and for its base64 encoding, in the
// places in says, reading Events and objects from the API server with c.
// Empty secrets are ignored; a shorter one than 6 bytes is refused, as
// is a call with none left, or with
// Lists and no Namespaces. The base64 forms looked for are the standard and
// the URL alphabets, with or without padding, of the value on its own.
//
// The error is nil when nothing was found. Otherwise it names every place a value was found, showing of the
// value only its first 2 characters followed by "…"; the message never
// holds a whole secret, even where a place's name would.
func NoSecrets(ctx context.Context, c client.Client, secrets []string, in Scope) error {
	f, err := newFinder(secrets)
	if err != nil {
		return err
	}
	if len(in.Lists) > 0 && len(in.Namespaces) == 0 {
		return errors.New("oracle: NoSecrets given lists to search but no namespaces")
	}
	if len(in.Namespaces) > 0 && c == nil {
		return errors.New("oracle: NoSecrets given namespaces but no client")
	}
	f.logs(in.Logs)
	for _, ns := range in.Namespaces {
		if err := f.events(ctx, c, ns); err != nil {
			return err
		}
		for _, list := range in.Lists {
			if err := f.objects(ctx, c, ns, list); err != nil {
				return err
			}
		}
	}
	return f.err()
}

// NoSecretsInLogs is NoSecrets over log lines only: it looks for each of
// secrets, and its base64 encoding, in every entry's logger name, message
// and error text, and in each key and value. A value is rendered as %+v
// prints it, as JSON, and, for a []byte, as the bytes themselves, so a
// secret is found inside a struct, behind a pointer or in bytes.
func NoSecretsInLogs(secrets []string, entries []bosuntest.LogEntry) error {
	f, err := newFinder(secrets)
	if err != nil {
		return err
	}
	f.logs(entries)
	return f.err()
}

// needle is one text to look for.
type needle struct {
	text  string
	label string // `secret "pa…"` or `base64 of secret "pa…"`
}

// finder looks for needles and collects where it found them.
type finder struct {
	needles []needle
	found   map[string]bool
}

func newFinder(secrets []string) (*finder, error) {
	f := &finder{found: map[string]bool{}}
	for i, s := range secrets {
		if s == "" {
			continue
		}
		if len(s) < minSecretLength {
			return nil, fmt.Errorf("oracle: secret %d is %d bytes long, under %d: %w", i, len(s), minSecretLength, errShortSecret)
		}
		label := fmt.Sprintf("secret %q", hint(s))
		f.needles = append(f.needles, needle{text: s, label: label})
		seen := map[string]bool{}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			// The unpadded form is a prefix of the padded one, so it finds
			// both.
			b := enc.EncodeToString([]byte(s))
			if !seen[b] {
				seen[b] = true
				f.needles = append(f.needles, needle{text: b, label: "base64 of " + label})
			}
		}
	}
	if len(f.needles) == 0 {
		return nil, fmt.Errorf("oracle: %w", errNoSecrets)
	}
	return f, nil
}

// hint returns the first 2 characters of s followed by "…".
func hint(s string) string {
	r := []rune(s)
	return string(r[:min(2, len(r))]) + "…"
}

// look records each needle found in text, at where.
func (f *finder) look(where, text string) {
	for _, n := range f.needles {
		if strings.Contains(text, n.text) {
			f.found[n.label+" in "+f.redact(where)] = true
		}
	}
}

// redact replaces every needle in s by its hint, so that a place's name
// can be printed.
func (f *finder) redact(s string) string {
	for _, n := range f.needles {
		s = strings.ReplaceAll(s, n.text, hint(n.text))
	}
	return s
}

// quote returns s redacted, then quoted as %q would: quoting first could
// escape a secret out of redact's sight.
func (f *finder) quote(s string) string {
	return strconv.Quote(f.redact(s))
}

// err returns the error naming every place found, or nil.
func (f *finder) err() error {
	if len(f.found) == 0 {
		return nil
	}
	lines := make([]string, 0, len(f.found))
	for l := range f.found {
		lines = append(lines, l)
	}
	return fmt.Errorf("oracle: %w in %s:%s", errSecretFound, count(len(lines), "place"), indent(lines))
}

// logs searches log lines.
func (f *finder) logs(entries []bosuntest.LogEntry) {
	for i, e := range entries {
		at := fmt.Sprintf("log line %d (%s)", i, f.quote(e.Message))
		f.look(at+" logger name", e.Name)
		f.look(at+" message", e.Message)
		if e.Err != nil {
			f.look(at+" error", e.Err.Error())
			for _, r := range renderings(e.Err) {
				f.look(at+" error", r)
			}
		}
		for j := 0; j < len(e.Values); j += 2 {
			key := fmt.Sprint(e.Values[j])
			f.look(fmt.Sprintf("%s key %s", at, f.quote(key)), key)
			if j+1 < len(e.Values) {
				for _, r := range renderings(e.Values[j+1]) {
					f.look(fmt.Sprintf("%s value of %s", at, f.quote(key)), r)
				}
			}
		}
	}
}

// renderings returns the texts a log value may be shown as.
func renderings(v any) []string {
	out := []string{fmt.Sprintf("%+v", v)}
	if b, ok := v.([]byte); ok {
		out = append(out, string(b))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err == nil {
		out = append(out, buf.String())
	}
	return out
}

// events searches the Events of namespace ns. The API server serves each
// event through both APIs; it is searched once, under its events.k8s.io/v1
// field names when that API has it.
func (f *finder) events(ctx context.Context, c client.Client, ns string) error {
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("oracle: listing events.k8s.io/v1 Events in %s: %w", ns, err)
	}
	seen := map[types.UID]bool{}
	for _, e := range events.Items {
		seen[e.UID] = true
		at := "Event " + ns + "/" + e.Name
		f.look(at+" note", e.Note)
		f.look(at+" reason", e.Reason)
		f.look(at+" action", e.Action)
	}
	var core corev1.EventList
	if err := c.List(ctx, &core, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("oracle: listing core/v1 Events in %s: %w", ns, err)
	}
	for _, e := range core.Items {
		if seen[e.UID] {
			continue
		}
		at := "Event " + ns + "/" + e.Name
		f.look(at+" message", e.Message)
		f.look(at+" reason", e.Reason)
		f.look(at+" action", e.Action)
	}
	return nil
}

// objects searches the status, annotations and labels of the objects of
// list in namespace ns.
func (f *finder) objects(ctx context.Context, c client.Client, ns string, list client.ObjectList) error {
	l := freshList(list)
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("oracle: listing %s in %s: %w", kindOf(c, list), ns, err)
	}
	objs, err := items(l)
	if err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	for _, obj := range objs {
		at := describe(c, obj)
		for _, k := range slices.Sorted(maps.Keys(obj.GetLabels())) {
			f.look(fmt.Sprintf("%s label key %s", at, f.quote(k)), k)
			f.look(fmt.Sprintf("%s label %s", at, f.quote(k)), obj.GetLabels()[k])
		}
		for _, k := range slices.Sorted(maps.Keys(obj.GetAnnotations())) {
			f.look(fmt.Sprintf("%s annotation key %s", at, f.quote(k)), k)
			f.look(fmt.Sprintf("%s annotation %s", at, f.quote(k)), obj.GetAnnotations()[k])
		}
		m, err := content(obj)
		if err != nil {
			return fmt.Errorf("oracle: %w", err)
		}
		if status, ok := m["status"]; ok {
			f.walk(at, "status", status)
		}
	}
	return nil
}

// walk searches every key and leaf of v, a part of an object's JSON form
// at path.
func (f *finder) walk(at, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			f.look(fmt.Sprintf("%s %s key %s", at, path, f.quote(k)), k)
			f.walk(at, path+"."+k, child)
		}
	case []any:
		for i, child := range v {
			f.walk(at, fmt.Sprintf("%s[%d]", path, i), child)
		}
	case string:
		f.look(at+" "+path, v)
	case nil:
	default:
		f.look(at+" "+path, fmt.Sprint(v))
	}
}
