package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// HostFunctions returns the host functions linked into a plugin: the ones in
// granted work, every other one fails with an error that names the grant to
// add. Host functions act on the session and request of the call that
// invoked them, found in the call's context.
func (s *Server) HostFunctions(plugin string, granted []string) []sandbox.HostFunction {
	elicitationComplete := s.notifyElicitationComplete(plugin)
	impl := map[string]func(ctx context.Context, in []byte) ([]byte, error){
		abi.HostNotifyLoggingMessage:          s.notifyLoggingMessage(plugin),
		abi.HostNotifyProgress:                notifyProgress,
		abi.HostCreateMessage:                 createMessage,
		abi.HostCreateElicitation:             s.createElicitation(plugin),
		abi.HostListRoots:                     listRoots,
		abi.HostNotifyResourceUpdated:         s.notifyResourceUpdated(plugin),
		abi.HostNotifyToolListChanged:         s.notifyListChanged(plugin),
		abi.HostNotifyPromptListChanged:       s.notifyListChanged(plugin),
		abi.HostNotifyResourceListChanged:     s.notifyListChanged(plugin),
		abi.HostNotifyElicitationComplete:     elicitationComplete,
		abi.HostNotifyURLElicitationCompleted: elicitationComplete,
	}
	fns := make([]sandbox.HostFunction, 0, len(hostSignatures))
	for _, sig := range hostSignatures {
		f := sig
		fn, ok := impl[f.Name]
		switch {
		case !slices.Contains(granted, f.Name) && !slices.Contains(granted, hostAliases[f.Name]):
			fn = denied(fmt.Sprintf("host function %s is not granted to plugin %s (add it to host_functions in [plugins.%s])", f.Name, plugin, plugin))
		case !ok:
			fn = denied(fmt.Sprintf("host function %s is not supported by this version of mcphost", f.Name))
		}
		f.Fn = fn
		fns = append(fns, f)
	}
	return fns
}

// hostSignatures gives each host function's shape, in the order of
// abi.HostFunctionNames: whether it takes input and returns output (Extism
// memory handles holding JSON), from abi.HostSignatureOf.
var hostSignatures = func() []sandbox.HostFunction {
	names := abi.HostFunctionNames()
	fns := make([]sandbox.HostFunction, 0, len(names))
	for _, name := range names {
		sig, _ := abi.HostSignatureOf(name)
		fns = append(fns, sandbox.HostFunction{Name: name, Input: sig.Input, Output: sig.Output})
	}
	return fns
}()

// hostAliases pairs the host functions that are one function under two
// names; granting either grants both.
var hostAliases = map[string]string{
	abi.HostNotifyElicitationComplete:     abi.HostNotifyURLElicitationCompleted,
	abi.HostNotifyURLElicitationCompleted: abi.HostNotifyElicitationComplete,
}

func denied(msg string) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) { return nil, errors.New(msg) }
}

// notifyLoggingMessage sends notifications/message to the session of the
// call, when its level passes the session's logging/setLevel. Messages over
// the plugin's rate limit (ratelimit.go) are dropped without an error.
func (s *Server) notifyLoggingMessage(plugin string) func(ctx context.Context, in []byte) ([]byte, error) {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		req := requestFrom(ctx)
		if req == nil {
			return nil, errors.New("notify_logging_message: no client request is being served")
		}
		var p abi.LoggingMessageParams
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, fmt.Errorf("notify_logging_message: bad input: %w", err)
		}
		lvl, ok := parseLogLevel(p.Level)
		if !ok {
			return nil, fmt.Errorf("notify_logging_message: unknown level %q", p.Level)
		}
		if p.Logger == "" {
			p.Logger = plugin
		}
		if !req.sess.wantsLog(lvl) || !s.allowLog(plugin) {
			return nil, nil
		}
		return nil, req.reply.Send(encodeNotification("notifications/message", p))
	}
}

// notifyProgress sends notifications/progress for the call's request. The
// token must be the request's own, progress must increase, and nothing is
// sent once the request has ended.
func notifyProgress(ctx context.Context, in []byte) ([]byte, error) {
	req := requestFrom(ctx)
	if req == nil {
		return nil, errors.New("notify_progress: no client request is being served")
	}
	var p abi.ProgressParams
	if err := json.Unmarshal(in, &p); err != nil {
		return nil, fmt.Errorf("notify_progress: bad input: %w", err)
	}
	token := req.progressToken()
	if req.notification {
		return nil, errors.New("notify_progress: a client notification (" + req.method + ") has no progress")
	}
	if token == nil {
		return nil, errors.New("notify_progress: the client did not ask for progress on this request")
	}
	if p.ProgressToken != nil && fmt.Sprint(p.ProgressToken) != fmt.Sprint(token) {
		return nil, errors.New("notify_progress: progressToken does not belong to this request")
	}
	p.ProgressToken = token
	if !atLeast(req.sess.Version(), Version20250326) {
		p.Message = ""
	}
	req.mu.Lock()
	defer req.mu.Unlock()
	if req.done {
		return nil, errors.New("notify_progress: the request has ended")
	}
	if req.lastProgress != nil && p.Progress <= *req.lastProgress {
		return nil, fmt.Errorf("notify_progress: progress must increase (%v after %v)", p.Progress, *req.lastProgress)
	}
	req.lastProgress = &p.Progress
	return nil, req.reply.Send(encodeNotification("notifications/progress", p))
}
