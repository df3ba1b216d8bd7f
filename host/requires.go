package host

import (
	"encoding/json"
	"slices"

	"github.com/mcphost/mcphost/abi"
)

// A tool, prompt, resource or resource template may declare the client
// capabilities it needs, shaped as ClientCapabilities, in its _meta under
// requiresKey: {"extensions": {"io.modelcontextprotocol/ui": {}}} for MCP
// Apps, {"sampling": {}} for a tool that samples. The catalog is built once
// at load; each request filters it: lists leave out what the request's
// client did not declare, and using such an item anyway is -32021 naming
// what is missing (invalid params in a legacy session).

// requiresKey is the _meta key of the client capabilities an item needs.
const requiresKey = "mcphost/requires"

func (e *toolEntry) meta() abi.Meta     { return e.tool.Meta }
func (e *promptEntry) meta() abi.Meta   { return e.prompt.Meta }
func (e *resourceEntry) meta() abi.Meta { return e.resource.Meta }
func (e *templateEntry) meta() abi.Meta { return e.template.Meta }

// usable returns the entries whose requirements the request's client meets.
func usable[E owned](req *request, entries []E) []E {
	if !slices.ContainsFunc(entries, func(e E) bool { return e.meta()[requiresKey] != nil }) {
		return entries
	}
	return slices.DeleteFunc(slices.Clone(entries), func(e E) bool { return req.lacksRequirement(e.meta()) != nil })
}

// declared returns what the request's client declared, decoded once.
func (r *request) declared() map[string]any {
	r.mu.Lock()
	caps := r.declaredCaps
	r.mu.Unlock()
	if caps != nil {
		return caps
	}
	_ = json.Unmarshal(r.rawCapabilities(), &caps)
	if caps == nil {
		caps = map[string]any{}
	}
	r.mu.Lock()
	r.declaredCaps = caps
	r.mu.Unlock()
	return caps
}

// lacksRequirement returns what an item's requirement asks that the
// request's client did not declare, or nil.
func (r *request) lacksRequirement(meta abi.Meta) map[string]any {
	want, ok := meta[requiresKey].(map[string]any)
	if !ok {
		return nil
	}
	return missingCaps(want, r.declared())
}

// missingCaps returns the part of want that have does not declare.
func missingCaps(want, have map[string]any) map[string]any {
	out := map[string]any{}
	for key, w := range want {
		h, ok := have[key]
		if !ok || h == nil {
			out[key] = w
			continue
		}
		wm, _ := w.(map[string]any)
		hm, _ := h.(map[string]any)
		if sub := missingCaps(wm, hm); sub != nil {
			out[key] = sub
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// meetRequirement refuses the use of an item (kind and name for the
// message) whose requirement the request's client does not meet.
func (r *request) meetRequirement(kind, name string, meta abi.Meta) error {
	lack := r.lacksRequirement(meta)
	if lack == nil {
		return nil
	}
	return r.era.unmet(r, kind, name, lack)
}

// mergeCaps adds the capabilities of b to a.
func mergeCaps(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for key, v := range b {
		am, aok := a[key].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			a[key] = mergeCaps(am, bm)
		} else {
			a[key] = v
		}
	}
	return a
}
