package bosun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/statusfield"
)

// The merge patches of the engine's writes and of a Pass's: the patch of
// an object's changes, the status alone when nothing else changed
// (statusOnlyDiff), the guard of a write (withResourceVersion), and the
// three-way merge that writes a pass's status changes over another
// client's (rebaseStatus).

// withResourceVersion adds metadata.resourceVersion to a merge patch, so the
// API server refuses it with 409 Conflict if the object changed meanwhile.
func withResourceVersion(patch map[string]json.RawMessage, rv string) ([]byte, error) {
	meta := map[string]json.RawMessage{}
	if raw, ok := patch["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("computing changes: %w", err)
		}
	}
	meta["resourceVersion"] = json.RawMessage(strconv.Quote(rv))
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("computing changes: %w", err)
	}
	patch["metadata"] = rawMeta
	body, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("computing changes: %w", err)
	}
	return body, nil
}

// statusOnlyDiff compares two objects of the same Go type field by field.
// same reports that every field but the status is deeply equal; status is
// then the merge patch from the old status to the new one, nil when they
// are equal too. For objects that are not structs with a status field,
// same is false and the caller computes the patch of the whole objects.
func statusOnlyDiff(before, after client.Object) (same bool, status json.RawMessage, err error) {
	bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
	if bv.Type() != av.Type() || bv.Kind() != reflect.Pointer || bv.Elem().Kind() != reflect.Struct || bv.IsNil() || av.IsNil() {
		return false, nil, nil
	}
	bv, av = bv.Elem(), av.Elem()
	idx := statusfield.Index(bv.Type())
	if idx < 0 {
		return false, nil, nil
	}
	for i := range bv.NumField() {
		if i != idx && !reflect.DeepEqual(bv.Field(i).Interface(), av.Field(i).Interface()) {
			return false, nil, nil
		}
	}
	bs, as := bv.Field(idx).Interface(), av.Field(idx).Interface()
	if reflect.DeepEqual(bs, as) {
		return true, nil, nil
	}
	oldJSON, err := json.Marshal(bs)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	newJSON, err := json.Marshal(as)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	if !jsonObject(oldJSON) || !jsonObject(newJSON) {
		// A status that is null or not an object: the whole patch says
		// how to write it.
		return false, nil, nil
	}
	patch, err := jsonpatch.CreateMergePatch(oldJSON, newJSON)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	if len(patch) <= 2 { // "{}": equal once encoded
		return true, nil, nil
	}
	return true, patch, nil
}

// jsonObject reports whether data encodes a JSON object.
func jsonObject(data []byte) bool { return len(data) > 0 && data[0] == '{' }

// errStatusOverlap is rebaseStatus's answer when another writer changed a
// condition type or a status field that the pass changed too, to another
// value.
var errStatusOverlap = errors.New("another client changed what the pass changed")

// rebaseStatus applies the pass's status changes to fresh, a newer version
// of the object than orig, the version the pass read: patch is the merge
// patch from orig's status to the pass's. It returns fresh with
// those changes, and the merge patch from fresh's status to the result,
// nil when fresh holds them already.
//
// The changes are taken three ways, from orig to the pass's status and
// from orig to fresh's. Conditions (status.conditions) go by type: a type
// the pass added, changed or removed is the pass's, and the others keep
// what fresh holds. The other members of the status go field by field
// (objects member by member, anything else whole). Where both changed the
// same condition type or field to different values, the result is
// errStatusOverlap, unless mineWins says to take the pass's value there.
func rebaseStatus[T client.Object](orig, fresh T, patch json.RawMessage, mineWins bool) (rebased T, onto json.RawMessage, err error) {
	origJSON, err := json.Marshal(orig)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	freshJSON, err := json.Marshal(fresh)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	wrapped, err := json.Marshal(map[string]json.RawMessage{"status": patch})
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	mineJSON, err := jsonpatch.MergePatch(origJSON, wrapped)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	var statuses [3]any
	for i, doc := range [][]byte{origJSON, mineJSON, freshJSON} {
		if statuses[i], err = statusValue(doc); err != nil {
			return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
		}
		if statuses[i] == absent {
			// No status yet: as good as an empty one.
			statuses[i] = map[string]any{}
		}
	}
	merged, ok := mergeValue(statuses[0], statuses[1], statuses[2], statusMember, mineWins)
	if !ok {
		return rebased, nil, errStatusOverlap
	}
	theirs, err := json.Marshal(statuses[2])
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	result, err := json.Marshal(merged)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	if !jsonObject(theirs) || !jsonObject(result) {
		// A status that is not an object on either side: nothing to
		// merge member by member.
		return rebased, nil, errStatusOverlap
	}
	if onto, err = jsonpatch.CreateMergePatch(theirs, result); err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	if len(onto) <= 2 { // "{}"
		return fresh, nil, nil
	}
	wrapped, err = json.Marshal(map[string]json.RawMessage{"status": onto})
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	rebasedJSON, err := jsonpatch.MergePatch(freshJSON, wrapped)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	rebased = reflect.New(reflect.TypeOf(fresh).Elem()).Interface().(T)
	if err := json.Unmarshal(rebasedJSON, rebased); err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	return rebased, onto, nil
}

// statusValue decodes the status of the JSON object doc, numbers as
// json.Number so that none is rounded; absent when it has none.
func statusValue(doc []byte) (any, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil {
		return nil, err
	}
	raw, ok := members["status"]
	if !ok {
		return absent, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// absentValue stands for a member a JSON object does not have, in
// mergeValue.
type absentValue struct{}

// absent is the absentValue.
var absent any = absentValue{}

// member returns v's member k, or absent.
func member(v any, k string) any {
	if m, ok := v.(map[string]any); ok {
		if x, ok := m[k]; ok {
			return x
		}
	}
	return absent
}

// memberKind says what a value is to mergeValue.
type memberKind int

const (
	// plainMember is any value below the status but its conditions.
	plainMember memberKind = iota
	// statusMember is the status itself.
	statusMember
	// conditionsMember is status.conditions.
	conditionsMember
)

// mergeValue merges three versions of a decoded JSON value: base, the
// version the pass read, mine, the pass's, and theirs, the stored one. A
// value one side left as base was takes the other side's; one both sides
// changed alike is kept. Otherwise objects are merged member by member,
// the status's conditions by type (mergeConditions), and anything else
// is a conflict: ok is false, or, with mineWins, the pass's value.
func mergeValue(base, mine, theirs any, kind memberKind, mineWins bool) (merged any, ok bool) {
	switch {
	case reflect.DeepEqual(mine, base):
		return theirs, true
	case reflect.DeepEqual(theirs, base), reflect.DeepEqual(theirs, mine):
		return mine, true
	case kind == conditionsMember:
		return mergeConditions(base, mine, theirs, mineWins)
	}
	m, okM := mine.(map[string]any)
	t, okT := theirs.(map[string]any)
	if !okM || !okT {
		return mine, mineWins
	}
	out := make(map[string]any, len(t))
	for _, side := range []map[string]any{m, t} {
		for k := range side {
			if _, done := out[k]; done {
				continue
			}
			sub := plainMember
			if kind == statusMember && k == "conditions" {
				sub = conditionsMember
			}
			v, ok := mergeValue(member(base, k), member(m, k), member(t, k), sub, mineWins)
			if !ok {
				return nil, false
			}
			if v != absent {
				out[k] = v
			}
		}
	}
	return out, true
}

// mergeConditions merges three versions of a list of conditions by type
// (see mergeValue): the types the pass added, changed or removed take the
// pass's condition, unless theirs changed that type too, to another value;
// every other condition of theirs stays as it is, where it is. Conditions
// the pass added come after theirs, in the pass's order. A list that is
// not one of objects with distinct string types is a conflict. With
// mineWins, the pass's condition is taken where theirs changed it too,
// and the pass's list where a list cannot be taken apart.
func mergeConditions(base, mine, theirs any, mineWins bool) (any, bool) {
	b, okB := conditionsByType(base)
	m, okM := conditionsByType(mine)
	t, okT := conditionsByType(theirs)
	if !okB || !okM || !okT {
		return mine, mineWins
	}
	// The pass's types in its order, then those it removed.
	var types []string
	for _, list := range []any{mine, base} {
		list, _ := list.([]any)
		for _, c := range list {
			if typ := c.(map[string]any)["type"].(string); !slices.Contains(types, typ) {
				types = append(types, typ)
			}
		}
	}
	out, _ := theirs.([]any)
	out = slices.Clone(out)
	for _, typ := range types {
		bc, mc, tc := b[typ], m[typ], t[typ]
		if reflect.DeepEqual(bc, mc) || reflect.DeepEqual(tc, mc) {
			continue
		}
		if !reflect.DeepEqual(tc, bc) && !mineWins {
			return nil, false
		}
		i := slices.IndexFunc(out, func(c any) bool { return c.(map[string]any)["type"] == typ })
		switch {
		case mc == nil && i < 0:
		case mc == nil:
			out = slices.Delete(out, i, i+1)
		case i >= 0:
			out[i] = mc
		default:
			out = append(out, mc)
		}
	}
	if len(out) == 0 && theirs == absent {
		return absent, true
	}
	return out, true
}

// conditionsByType indexes a decoded list of conditions by type; absent
// is an empty list. ok is false for anything but a list of objects with
// distinct string types.
func conditionsByType(v any) (map[string]any, bool) {
	if v == absent {
		return map[string]any{}, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	byType := make(map[string]any, len(list))
	for _, c := range list {
		obj, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		typ, ok := obj["type"].(string)
		if !ok || byType[typ] != nil {
			return nil, false
		}
		byType[typ] = obj
	}
	return byType, true
}
