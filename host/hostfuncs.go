package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// HostFunc is the implementation of a host function: it takes the JSON
// input the plugin passed (nil when the function takes none) and returns
// the JSON output (nil when it returns none).
type HostFunc func(ctx context.Context, input []byte) ([]byte, error)

// HostFunctions returns the implementations of the host functions this
// server offers a plugin, by name (abi.HostNotifyProgress, ...). Which of
// them the plugin may call is the plugin host's decision. They act on the
// session and request of the call that invoked them, found in the call's
// context.
func (s *Server) HostFunctions(plugin string) map[string]HostFunc {
	elicitationComplete := s.notifyElicitationComplete(plugin)
	return map[string]HostFunc{
		abi.HostNotifyLoggingMessage:          s.notifyLoggingMessage(plugin),
		abi.HostNotifyProgress:                notifyProgress,
		abi.HostCreateMessage:                 createMessage,
		abi.HostCreateElicitation:             s.createElicitation(plugin),
		abi.HostListRoots:                     listRoots,
		abi.HostRequestInput:                  askClient(),
		abi.HostNotifyResourceUpdated:         s.notifyResourceUpdated(plugin),
		abi.HostNotifyToolListChanged:         s.notifyListChanged(plugin),
		abi.HostNotifyPromptListChanged:       s.notifyListChanged(plugin),
		abi.HostNotifyResourceListChanged:     s.notifyListChanged(plugin),
		abi.HostNotifyElicitationComplete:     elicitationComplete,
		abi.HostNotifyURLElicitationCompleted: elicitationComplete,
	}
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
		if !req.wantsLog(lvl) || !s.allowLog(plugin) {
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
	if !atLeast(req.version(), Version20250326) {
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
