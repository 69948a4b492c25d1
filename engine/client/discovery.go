package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Mapping is what discovery says about one resource: its REST name, its
// kind and whether it lives in namespaces.
type Mapping struct {
	Resource     Resource
	Kind         string
	SingularName string
	ShortNames   []string
	Namespaced   bool
	Verbs        []string
}

// APIVersion is the mapping's group/version as objects name it ("v1",
// "apps/v1").
func (m Mapping) APIVersion() string {
	if m.Resource.Group == "" {
		return m.Resource.Version
	}
	return m.Resource.Group + "/" + m.Resource.Version
}

// Supports reports whether every verb is among the resource's.
func (m Mapping) Supports(verbs ...string) bool {
	for _, v := range verbs {
		found := false
		for _, w := range m.Verbs {
			found = found || w == v
		}
		if !found {
			return false
		}
	}
	return true
}

// Mapper resolves the names people type ("deployments", "deploy",
// "Deployment", "deployments.apps", "deployments.v1.apps") to resources
// the way kubectl does: from the server's discovery documents (/api/v1,
// /apis and each group's preferred version), read once and read again when
// a name is not found, since the server may have started serving it.
type Mapper struct {
	c *Client

	mu       sync.Mutex
	mappings []Mapping
}

// NewMapper returns a mapper that discovers through c.
func NewMapper(c *Client) *Mapper { return &Mapper{c: c} }

// Lookup resolves name. A name with dots is resource.group or
// resource.version.group; otherwise the core group wins over others, as
// kubectl's preferred order does.
func (m *Mapper) Lookup(ctx context.Context, name string) (Mapping, error) {
	m.mu.Lock()
	known := m.mappings
	m.mu.Unlock()
	if known != nil {
		if mp, ok := match(known, name); ok {
			return mp, nil
		}
	}
	fresh, err := m.discover(ctx)
	if err != nil {
		return Mapping{}, err
	}
	m.mu.Lock()
	m.mappings = fresh
	m.mu.Unlock()
	if mp, ok := match(fresh, name); ok {
		return mp, nil
	}
	return Mapping{}, fmt.Errorf("the server doesn't have a resource type %q", name)
}

// All discovers every resource the server serves (read afresh).
func (m *Mapper) All(ctx context.Context) ([]Mapping, error) {
	fresh, err := m.discover(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mappings = fresh
	m.mu.Unlock()
	return fresh, nil
}

func match(ms []Mapping, name string) (Mapping, bool) {
	res, group, version := name, "", ""
	if i := strings.IndexByte(name, '.'); i >= 0 {
		res, group = name[:i], name[i+1:]
		if v, g, ok := strings.Cut(group, "."); ok && strings.HasPrefix(v, "v") && len(v) > 1 && v[1] >= '0' && v[1] <= '9' {
			version, group = v, g
		}
	}
	lower := strings.ToLower(res)
	for _, mp := range ms {
		if name != res && (mp.Resource.Group != group || (version != "" && mp.Resource.Version != version)) {
			continue
		}
		if mp.Resource.Resource == lower || mp.SingularName == lower || strings.ToLower(mp.Kind) == lower {
			return mp, true
		}
		for _, s := range mp.ShortNames {
			if s == lower {
				return mp, true
			}
		}
	}
	return Mapping{}, false
}

// discover reads the core group's resources and every group's preferred
// version, core first.
func (m *Mapper) discover(ctx context.Context) ([]Mapping, error) {
	var out []Mapping
	core, err := m.resources(ctx, "/api/v1", "", "v1")
	if err != nil {
		return nil, err
	}
	out = append(out, core...)
	data, err := m.c.call(ctx, "GET", "/apis", nil, nil, "")
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		return nil, fmt.Errorf("discovery: decoding /apis: %w", err)
	}
	for _, g := range groups.Groups {
		v := g.PreferredVersion.Version
		rs, err := m.resources(ctx, "/apis/"+g.Name+"/"+v, g.Name, v)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func (m *Mapper) resources(ctx context.Context, path, group, version string) ([]Mapping, error) {
	data, err := m.c.call(ctx, "GET", path, nil, nil, "")
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var list struct {
		Resources []struct {
			Name         string   `json:"name"`
			SingularName string   `json:"singularName"`
			Namespaced   bool     `json:"namespaced"`
			Kind         string   `json:"kind"`
			ShortNames   []string `json:"shortNames"`
			Verbs        []string `json:"verbs"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("discovery: decoding %s: %w", path, err)
	}
	var out []Mapping
	for _, r := range list.Resources {
		if strings.Contains(r.Name, "/") {
			continue // a subresource
		}
		out = append(out, Mapping{Resource: Resource{Group: group, Version: version, Resource: r.Name},
			Kind: r.Kind, SingularName: r.SingularName, ShortNames: r.ShortNames, Namespaced: r.Namespaced, Verbs: r.Verbs})
	}
	return out, nil
}
