package host

import (
	"context"
	"encoding/json"
	"time"
)

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      *implementation `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// initialize negotiates the protocol version and answers with the server's
// capabilities, as derived from the catalog, once the plugins loading at
// start-up are ready or have had their time (startup.go).
func (sess *Session) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: protocolVersion is required")
	}
	version := negotiateVersion(p.ProtocolVersion)
	srv := sess.srv
	owner := srv.subject(ctx)
	sess.mu.Lock()
	if sess.began {
		sess.mu.Unlock()
		return nil, rpcErrorf(CodeInvalidRequest, "invalid request: the session is already initialized")
	}
	sess.began, sess.owner = true, owner
	stream := sess.stream
	sess.mu.Unlock()
	rec := sessionRecord{ID: sess.id, Owner: owner, Version: version, ClientCaps: p.Capabilities, Scopes: srv.scopes(ctx), LogLevel: defaultLogLevel, LastUsed: time.Now(),
		Endpoint: sess.endpoint, Stream: stream}
	if p.ClientInfo != nil {
		rec.Client = p.ClientInfo.Name
	}
	if err := srv.sessionStore.put(rec); err != nil {
		sess.mu.Lock()
		sess.began = false
		sess.mu.Unlock()
		return nil, err
	}

	info := srv.info()
	if !atLeast(version, Version20250618) {
		info.Title = ""
	}
	if p.ClientInfo != nil {
		srv.logger.Info("client initialized", "client", p.ClientInfo.Name, "clientVersion", p.ClientInfo.Version, "protocolVersion", version)
		sess.mu.Lock()
		sess.client = p.ClientInfo.Name
		sess.mu.Unlock()
	}
	loading := srv.awaitStartup(ctx)
	return initializeResult{
		ProtocolVersion: version,
		Capabilities:    srv.Catalog().capabilities(version, loading, srv.opts.CatalogChanges, sess.view()),
		ServerInfo:      info,
		Instructions:    srv.opts.Instructions,
	}, nil
}

// info is the server's identity: serverInfo of initialize, and of every
// 2026-07-28 result's _meta.
func (s *Server) info() implementation {
	return implementation{Name: s.opts.Name, Title: s.opts.Title, Version: s.opts.Version}
}

// handleNotification serves the notifications a client may send.
func (sess *Session) handleNotification(m *message) {
	switch m.Method {
	case "notifications/initialized":
		if err := sess.update(func(rec *sessionRecord) { rec.Ready = true }); err != nil {
			sess.srv.log().Warn("recording notifications/initialized failed", "session", sess.id, "err", err)
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			sess.cancelRequest(p.RequestID)
		}
	case "notifications/roots/list_changed":
		sess.rootsListChanged(m.Params)
	default:
		sess.srv.logger.Debug("ignoring notification", "method", m.Method)
	}
}
