package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconversion "sigs.k8s.io/controller-runtime/pkg/conversion"
)

// converter converts between a hub and its spokes, through the hub when
// neither is it, naming the object and both versions in every error and
// recovering a panic of a conversion function.
type converter struct {
	scheme *runtime.Scheme
}

// ConvertObject implements controller-runtime's conversion.Converter.
func (c converter) ConvertObject(_ context.Context, src, dst runtime.Object) (err error) {
	from, to := src.GetObjectKind().GroupVersionKind(), dst.GetObjectKind().GroupVersionKind()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		if err != nil {
			err = fmt.Errorf("converting %s %s from %s to %s: %w", from.Kind, ref(src), from.GroupVersion(), to.GroupVersion(), err)
			return
		}
		// A conversion function that assigns a whole struct also clears
		// apiVersion and kind, which the API server needs back.
		dst.GetObjectKind().SetGroupVersionKind(to)
	}()
	srcHub, srcIsHub := src.(crconversion.Hub)
	dstHub, dstIsHub := dst.(crconversion.Hub)
	srcSpoke, srcIsSpoke := src.(crconversion.Convertible)
	dstSpoke, dstIsSpoke := dst.(crconversion.Convertible)
	switch {
	case srcIsHub && dstIsSpoke:
		return dstSpoke.ConvertFrom(srcHub)
	case srcIsSpoke && dstIsHub:
		return srcSpoke.ConvertTo(dstHub)
	case srcIsSpoke && dstIsSpoke:
		hub, err := c.hub(from.GroupKind())
		if err != nil {
			return err
		}
		if err := srcSpoke.ConvertTo(hub); err != nil {
			return fmt.Errorf("to the hub: %w", err)
		}
		if err := dstSpoke.ConvertFrom(hub); err != nil {
			return fmt.Errorf("from the hub: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("%T cannot be converted to %T: one must be the hub and the other a spoke", src, dst)
	}
}

// hub returns a new object of the hub version of gk.
func (c converter) hub(gk schema.GroupKind) (crconversion.Hub, error) {
	for _, v := range c.scheme.VersionsForGroupKind(gk) {
		obj, err := c.scheme.New(v.WithKind(gk.Kind))
		if err != nil {
			continue
		}
		if hub, ok := obj.(crconversion.Hub); ok {
			return hub, nil
		}
	}
	return nil, fmt.Errorf("%s has no hub version in the scheme", gk)
}

// ref returns obj as namespace/name when it has object metadata.
func ref(obj runtime.Object) string {
	if o, ok := obj.(client.Object); ok {
		return objectRef(o)
	}
	return fmt.Sprintf("%T", obj)
}
