package conversion

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/randfill"
)

// fillObjectMeta fills the metadata of an object as the API server could
// have left it: valid names, a UID, a numeric resourceVersion, a positive
// generation, times to the second, a few labels, annotations, finalizers and
// owner references. Managed fields stay empty.
func fillObjectMeta(m *metav1.ObjectMeta, c randfill.Continue) {
	*m = metav1.ObjectMeta{
		Name:              label(c),
		Namespace:         label(c),
		UID:               types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", c.Uint32(), c.Intn(1<<16), c.Intn(1<<16), c.Intn(1<<16), c.Int63n(1<<48))),
		ResourceVersion:   strconv.FormatInt(c.Int63n(1<<40)+1, 10),
		Generation:        c.Int63n(1000) + 1,
		CreationTimestamp: metav1.Unix(c.Int63n(1<<32), 0),
	}
	if c.Intn(4) == 0 {
		m.GenerateName = label(c) + "-"
	}
	if c.Intn(4) == 0 {
		at := metav1.Unix(m.CreationTimestamp.Unix()+c.Int63n(1<<20), 0)
		m.DeletionTimestamp = &at
	}
	if n := c.Intn(4); n > 0 {
		m.Labels = make(map[string]string, n)
		for range n {
			m.Labels["example.com/"+label(c)] = label(c)
		}
	}
	if n := c.Intn(4); n > 0 {
		m.Annotations = make(map[string]string, n)
		for range n {
			m.Annotations["example.com/"+label(c)] = c.String(0)
		}
	}
	for range c.Intn(3) {
		m.Finalizers = append(m.Finalizers, "example.com/"+label(c))
	}
	for range c.Intn(2) {
		controller := c.Bool()
		m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{
			APIVersion: "example.com/v1",
			Kind:       "Owner",
			Name:       label(c),
			UID:        types.UID(strconv.FormatUint(c.Uint64(), 16)),
			Controller: &controller,
		})
	}
}

// label returns a random DNS label of 1 to 12 characters.
func label(c randfill.Continue) string {
	const first = "abcdefghijklmnopqrstuvwxyz"
	const rest = first + "0123456789-"
	b := []byte{first[c.Intn(len(first))]}
	for range c.Intn(11) {
		b = append(b, rest[c.Intn(len(rest))])
	}
	if b[len(b)-1] == '-' {
		b[len(b)-1] = 'x'
	}
	return string(b)
}
