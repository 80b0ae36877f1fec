package managed

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/statusfield"
)

// The step decides what to do from the object's spec, its annotations,
// the status fields it keeps (status.observedGeneration, the change log),
// what Observe reports and its memory of the calls it made lately (see
// memo); never from its own conditions, which only inform (see the
// package documentation).

// keepStatus sets the status of dst to that of src, the copy Observe
// worked on, when their type has a Status field: what Observe wrote there
// of the external resource (status.atProvider, by convention) is kept,
// whatever it did to the copy's spec.
func keepStatus[T client.Object](dst, src T) {
	statusfield.Copy(dst, src)
}
