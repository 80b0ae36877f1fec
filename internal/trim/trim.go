package trim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
)

// KeepLabel marks the objects whose managedFields are kept: the children
// of a set (children.LabelSet), whose step reads some of them.
const KeepLabel = "bosun.dev/set"

// Reads returns a copy of c that trims the JSON answers to every GET
// request, as the list and watch requests of a cache are: a small custom
// resource's managedFields are about half its JSON and more than half the
// CPU of decoding it. The copy shares c's transport, and so its
// connections.
func Reads(c *http.Client) *http.Client { return wrap(c, true) }

// Marked returns a copy of c that trims the JSON answers to the requests
// made with a context from Mark, whatever their method, and passes every
// other answer as it came.
func Marked(c *http.Client) *http.Client { return wrap(c, false) }

// markKey is the context key of Mark.
type markKey struct{}

// Mark returns ctx with a mark that asks a Marked client to trim the
// answers to the requests made with it.
func Mark(ctx context.Context) context.Context {
	return context.WithValue(ctx, markKey{}, true)
}

// marked reports whether ctx carries the mark of Mark.
func marked(ctx context.Context) bool {
	m, _ := ctx.Value(markKey{}).(bool)
	return m
}

// wrap returns a copy of c whose transport trims the answers to GET
// requests (reads) or to marked requests. A client wrap made for the same
// answers is returned as it is.
func wrap(c *http.Client, reads bool) *http.Client {
	if t, ok := c.Transport.(*transport); ok && t.reads == reads {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &transport{base: base, reads: reads}
	return &cc
}

// transport trims the answers to GET requests (reads) or to marked
// requests (see trimReader).
type transport struct {
	base  http.RoundTripper
	reads bool
}

// RoundTrip sends req through the base transport and trims the answer.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || t.reads && req.Method != http.MethodGet || !t.reads && !marked(req.Context()) {
		return resp, err
	}
	if resp.Body == nil || resp.StatusCode < 200 || resp.StatusCode > 299 || !isJSON(resp.Header.Get("Content-Type")) {
		return resp, nil
	}
	resp.Body = &trimReader{body: resp.Body}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// WrappedRoundTripper returns the base transport, for client-go's
// transport helpers that look through wrappers.
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.base }

// CloseIdleConnections closes the base transport's idle connections.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// isJSON reports whether a Content-Type is JSON (a watch stream of JSON
// events included).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// maxTrimmed is the longest JSON value trimReader holds back whole: a longer
// one (a list of many objects, which the informers of a cache seldom ask for
// since they stream their lists as watch events) passes as it came, and so
// does the rest of the answer.
const maxTrimmed = 32 << 20

// minRead is the least room trimReader reads into, and idleBuffer the
// most it keeps between values: one of each per watch of a cache, which
// may hold hundreds.
const (
	minRead    = 4 << 10
	idleBuffer = 64 << 10
)

// trimReader reads a stream of JSON values (one object, or a watch
// stream's events) and gives each on as soon as it is whole, with the
// managedFields of the objects in it cut (trimValue). Anything it does not
// understand passes as it came, for the decoder to judge.
type trimReader struct {
	body io.ReadCloser
	buf  []byte // read from body; buf[lo:] is not given on yet
	lo   int
	out  []byte // given on and not yet read
	off  int    // bytes of out read
	end  valueEnd
	pass bool  // give everything on as it came from now on
	err  error // body's error, returned once buf and out are empty
}

// Read gives on what is ready, reading from the body only when nothing is.
func (r *trimReader) Read(p []byte) (int, error) {
	for {
		if r.off < len(r.out) {
			n := copy(p, r.out[r.off:])
			r.off += n
			return n, nil
		}
		r.out, r.off = r.out[:0], 0
		if cap(r.out) > idleBuffer {
			r.out = nil
		}
		if r.next() {
			continue
		}
		if r.err != nil {
			if r.lo < len(r.buf) {
				r.move(len(r.buf) - r.lo)
				continue
			}
			return 0, r.err
		}
		r.fill()
	}
}

// Close closes the body.
func (r *trimReader) Close() error { return r.body.Close() }

// fill reads what the body has into buf, after what is not given on yet.
func (r *trimReader) fill() {
	pending := len(r.buf) - r.lo
	switch {
	case pending == 0 && cap(r.buf) > idleBuffer:
		// A long value has gone through: a watch that stays open for
		// hours does not keep its buffer.
		r.buf, r.lo = nil, 0
	case r.lo > 0:
		copy(r.buf, r.buf[r.lo:])
		r.buf, r.lo = r.buf[:pending], 0
	}
	if cap(r.buf)-pending < minRead {
		grown := make([]byte, pending, 2*cap(r.buf)+minRead)
		copy(grown, r.buf)
		r.buf = grown
	}
	n, err := r.body.Read(r.buf[pending:cap(r.buf)])
	r.buf = r.buf[:pending+n]
	if err != nil {
		r.err = err
	}
}

// move gives on the next n bytes not given on yet as they came.
func (r *trimReader) move(n int) {
	r.out = append(r.out, r.buf[r.lo:r.lo+n]...)
	r.lo += n
}

// next moves what is ready to out: the space before a value, a whole value
// (trimmed), or everything once passing. It reports whether it moved
// anything.
func (r *trimReader) next() bool {
	in := r.buf[r.lo:]
	if len(in) == 0 {
		return false
	}
	if r.pass {
		r.move(len(in))
		return true
	}
	if r.end.at == 0 {
		if space := skipSpace(in, 0); space > 0 {
			r.move(space)
			return true
		}
		if in[0] != '{' {
			r.pass = true
			return r.next()
		}
	}
	n, ok := r.end.scan(in)
	if ok && n > maxTrimmed || !ok && len(in) > maxTrimmed {
		r.pass = true
		return r.next()
	}
	if !ok {
		return false
	}
	r.out = trimValue(r.out, in[:n])
	r.lo += n
	r.end = valueEnd{}
	return true
}

// valueEnd finds where the JSON value at the start of a buffer ends,
// carrying on from where the last scan stopped as the buffer grows.
type valueEnd struct {
	at    int // bytes scanned
	depth int
	inStr bool
}

// scan returns the length of the value at the start of b, and false when b
// does not hold all of it yet. b holds the value from its start on each
// call, so a quote is told from an escaped one by the backslashes before
// it.
func (e *valueEnd) scan(b []byte) (int, bool) {
	for e.at < len(b) {
		if e.inStr {
			q := bytes.IndexByte(b[e.at:], '"')
			if q < 0 {
				e.at = len(b)
				return 0, false
			}
			e.at += q + 1
			if !escaped(b, e.at-1) {
				e.inStr = false
			}
			continue
		}
		switch b[e.at] {
		case '"':
			e.inStr = true
		case '{', '[':
			e.depth++
		case '}', ']':
			e.depth--
			if e.depth <= 0 {
				e.at++
				return e.at, true
			}
		}
		e.at++
	}
	return 0, false
}

// escaped reports whether the quote at b[i] is escaped: an odd number of
// backslashes comes right before it.
func escaped(b []byte, i int) bool {
	n := 0
	for i--; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// trimValue appends v to dst without the managedFields of the objects it
// carries: v's own (a single object), its items' (a list) or its object's
// (a watch event). The managedFields of an object labelled KeepLabel are
// kept. A value trimValue cannot read is appended whole.
func trimValue(dst, v []byte) []byte {
	p := &jsonParser{b: v}
	if err := p.top(); err != nil || len(p.cuts) == 0 {
		return append(dst, v...)
	}
	at := 0
	for _, c := range p.cuts {
		dst = append(dst, v[at:c[0]]...)
		at = c[1]
	}
	return append(dst, v[at:]...)
}

// errNotJSON stops a jsonParser at bytes it cannot read.
var errNotJSON = errors.New("not JSON the trimming understands")

// jsonParser finds the byte ranges of the managedFields to cut from a JSON
// value.
type jsonParser struct {
	b           []byte
	i           int
	memberStart int // where the key of the member being read begins
	cuts        [][2]int
}

// top reads the value: an object whose object, items or metadata hold the
// objects to trim.
func (p *jsonParser) top() error {
	return p.members(func(key []byte, _ int) error {
		switch {
		case bytes.Equal(key, []byte("object")) && p.peek('{'):
			return p.resource()
		case bytes.Equal(key, []byte("items")) && p.peek('['):
			return p.elements(func() error {
				if p.peek('{') {
					return p.resource()
				}
				return p.skip()
			})
		case bytes.Equal(key, []byte("metadata")) && p.peek('{'):
			return p.metadata()
		}
		return p.skip()
	})
}

// resource reads an object and trims its metadata.
func (p *jsonParser) resource() error {
	return p.members(func(key []byte, _ int) error {
		if bytes.Equal(key, []byte("metadata")) && p.peek('{') {
			return p.metadata()
		}
		return p.skip()
	})
}

// metadata reads an object's metadata and records the managedFields
// member to cut, unless a label marks the object a child of a set.
func (p *jsonParser) metadata() error {
	var fields []trimmedMember
	child, n := false, 0
	err := p.members(func(key []byte, comma int) error {
		n++
		switch {
		case bytes.Equal(key, []byte("managedFields")):
			f := trimmedMember{start: p.memberStart, comma: comma, first: n == len(fields)+1}
			if err := p.skip(); err != nil {
				return err
			}
			f.end = p.i
			fields = append(fields, f)
			return nil
		case bytes.Equal(key, []byte("labels")) && p.peek('{'):
			return p.members(func(label []byte, _ int) error {
				// A key with an escape may spell the label: keep the fields.
				if bytes.Equal(label, []byte(KeepLabel)) || bytes.IndexByte(label, '\\') >= 0 {
					child = true
				}
				return p.skip()
			})
		}
		return p.skip()
	})
	if err != nil || child {
		return err
	}
	for _, f := range fields {
		// A member after one kept goes with the comma before it; one with
		// none kept before it, with the comma after it, if any.
		switch after := skipSpace(p.b, f.end); {
		case !f.first:
			p.cuts = append(p.cuts, [2]int{f.comma, f.end})
		case after < len(p.b) && p.b[after] == ',':
			p.cuts = append(p.cuts, [2]int{f.start, after + 1})
		default:
			p.cuts = append(p.cuts, [2]int{f.start, f.end})
		}
	}
	return nil
}

// trimmedMember is a member of an object that jsonParser cuts.
type trimmedMember struct {
	start, end int  // where its key begins and its value ends
	comma      int  // the comma before it, or -1
	first      bool // every member before it is cut too
}

// members reads an object, calling member with each key (as written,
// escapes left in) and the position of the comma before it (-1 for the
// first), with the parser at the member's value, which member must read,
// and memberStart where the member's key begins.
func (p *jsonParser) members(member func(key []byte, comma int) error) error {
	empty, err := p.open('{', '}')
	if err != nil || empty {
		return err
	}
	for comma := -1; ; {
		start := p.i
		key, err := p.str()
		if err != nil {
			return err
		}
		p.i = skipSpace(p.b, p.i)
		if !p.peek(':') {
			return errNotJSON
		}
		p.i = skipSpace(p.b, p.i+1)
		p.memberStart = start
		if err := member(key, comma); err != nil {
			return err
		}
		comma = skipSpace(p.b, p.i)
		if more, err := p.next('}'); err != nil || !more {
			return err
		}
	}
}

// elements reads an array, calling element with the parser at each
// element, which element must read.
func (p *jsonParser) elements(element func() error) error {
	empty, err := p.open('[', ']')
	if err != nil || empty {
		return err
	}
	for {
		if err := element(); err != nil {
			return err
		}
		if more, err := p.next(']'); err != nil || !more {
			return err
		}
	}
}

// open reads the bracket c that opens an object or an array, and reports
// whether end, the bracket that closes it, follows at once.
func (p *jsonParser) open(c, end byte) (empty bool, err error) {
	p.i = skipSpace(p.b, p.i)
	if !p.peek(c) {
		return false, errNotJSON
	}
	p.i = skipSpace(p.b, p.i+1)
	if p.peek(end) {
		p.i++
		return true, nil
	}
	return false, nil
}

// next reads what follows a member or an element: a comma, reporting that
// another follows, or end, the closing bracket.
func (p *jsonParser) next(end byte) (more bool, err error) {
	p.i = skipSpace(p.b, p.i)
	switch {
	case p.peek(','):
		p.i = skipSpace(p.b, p.i+1)
		return true, nil
	case p.peek(end):
		p.i++
		return false, nil
	}
	return false, errNotJSON
}

// str reads a string and returns its bytes between the quotes.
func (p *jsonParser) str() ([]byte, error) {
	if !p.peek('"') {
		return nil, errNotJSON
	}
	for j := p.i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			s := p.b[p.i+1 : j]
			p.i = j + 1
			return s, nil
		}
	}
	return nil, errNotJSON
}

// skip reads any value.
func (p *jsonParser) skip() error {
	if p.i >= len(p.b) {
		return errNotJSON
	}
	switch p.b[p.i] {
	case '"':
		_, err := p.str()
		return err
	case '{', '[':
		var e valueEnd
		n, ok := e.scan(p.b[p.i:])
		if !ok {
			return errNotJSON
		}
		p.i += n
		return nil
	}
	// A number, true, false or null: up to the next delimiter.
	j := p.i
	for j < len(p.b) && !delimiter(p.b[j]) {
		j++
	}
	if j == p.i {
		return errNotJSON
	}
	p.i = j
	return nil
}

// delimiter reports whether c ends a number or a literal.
func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// peek reports whether the next byte is c.
func (p *jsonParser) peek(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

// skipSpace returns the position of the first byte of b from i on that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}
