package plumbing

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RememberMappings returns m as a RESTMapper that keeps the mapping of
// each kind asked for in one given version (see rememberingMapper): a
// cache over several namespaces asks for it on every Get and List.
func RememberMappings(m meta.RESTMapper) meta.RESTMapper {
	return &rememberingMapper{RESTMapper: m}
}

// rememberingMapper is a RESTMapper that keeps the mapping of each kind
// asked for in one given version: a kind's scope and resource do not
// change while it is served in that version. Other lookups, and failed
// ones, go to the RESTMapper each time.
type rememberingMapper struct {
	meta.RESTMapper
	mappings sync.Map // schema.GroupVersionKind to *meta.RESTMapping
}

// RESTMapping returns a copy of the mapping kept for gk in versions[0],
// asking the RESTMapper on first use.
func (m *rememberingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	if v, ok := m.mappings.Load(gvk); ok {
		mapping := *v.(*meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	kept := *mapping
	m.mappings.Store(gvk, &kept)
	return mapping, nil
}
