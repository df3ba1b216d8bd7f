package host

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// rootsChangedInput is the input of on_roots_list_changed, hyper-mcp's
// PluginNotificationContext: {"context": {"_meta": M}}, M the
// notification's own _meta ({} when it has none).
func rootsChangedInput(meta abi.Meta) []byte {
	return append(appendMeta([]byte(`{"context":{"_meta":`), meta), `}}`...)
}

// rootsListChanged serves notifications/roots/list_changed: every plugin
// that exports on_roots_list_changed is called, in the background, in a
// request-like scope of the session, so it may call list_roots (and log).
// Failures are logged; the client never hears of them. A client that did
// not declare roots.listChanged, or is not initialized, is ignored. params
// are the notification's params, whose _meta the plugins receive.
func (sess *Session) rootsListChanged(params json.RawMessage) {
	srv := sess.srv
	caps := sess.capabilities()
	if !sess.live() || caps.Roots == nil || !caps.Roots.ListChanged {
		srv.log().Debug("ignoring notifications/roots/list_changed: the client is not initialized or did not declare roots.listChanged")
		return
	}
	var notification meta
	if len(params) > 0 {
		_ = json.Unmarshal(params, &notification) // params that are not an object have no _meta
	}
	input := rootsChangedInput(notification.Meta)
	for _, p := range srv.Catalog().plugins {
		if p.legacy || !p.rt.HasExport(abi.ExportOnRootsListChanged) || !sess.view().sees(p) {
			continue
		}
		// The scope of the plugin call: host functions find the session in
		// it and talk to the client on the session's own stream.
		req, rpcErr := sess.start(sess.closeCtx, nil, "notifications/roots/list_changed", era20251125{sess}, nil, sess.out)
		if rpcErr != nil {
			return // the session closed
		}
		go func() {
			defer sess.finish(req)
			if _, err := p.rt.Call(req.ctx, abi.ExportOnRootsListChanged, input); err != nil {
				srv.log().Warn("on_roots_list_changed failed", "plugin", p.Name, "err", p.failure(abi.ExportOnRootsListChanged, err))
			}
		}()
	}
}
