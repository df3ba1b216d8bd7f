// Package host implements the Model Context Protocol server side of mcphost:
// JSON-RPC 2.0, the session lifecycle and version negotiation, and the
// tools, prompts, resources, completion and logging features, all served
// from the plugins of a Catalog. Transports (stdio.go) feed it raw messages.
package host

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/gopool"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Server.
type Options struct {
	// Name, Title and Version are sent to clients as serverInfo.
	Name, Title, Version string
	// PageSize is the number of items per page of list results.
	PageSize int
	// Logger receives the server's own logs. Nil discards them.
	Logger *slog.Logger
	// Subject returns the authenticated subject of a request's context,
	// "" when it has none; tasks are visible only to their creator's
	// subject. Nil means no authentication: every subject is "".
	Subject func(ctx context.Context) string
	// Scopes returns the scopes of the token of a request's context, which
	// plugins see with the subject; nil means none.
	Scopes func(ctx context.Context) []string
	// Instructions tell clients (their models) how to use the server:
	// sent with initialize and server/discover.
	Instructions string
	// RequestStateKeys sign and verify the requestState of 2026-07-28
	// input_required results: the first signs, every one verifies (rotate
	// by putting the new key first and dropping the old one after
	// RequestStateTTL). Servers that share them complete each other's
	// retries. None: a random key of this process.
	RequestStateKeys [][]byte
	// SessionStore holds what 2025-era sessions negotiated, shared with
	// the other replicas of the service (SharedSessionStore), which must
	// share RequestStateKeys too; nil: this process's memory.
	SessionStore SharedSessionStore
	// SessionTTL is how long SessionStore keeps the record of a session no
	// request uses; DefaultSessionTTL when not positive.
	SessionTTL time.Duration
	// Changes carries list changes between the replicas of the service
	// (SharedChanges); run Server.FollowChanges to take the others'. Nil:
	// none.
	Changes SharedChanges
	// TaskStore holds the records of tasks, shared with the other
	// replicas of the service (SharedTaskStore), which must share
	// RequestStateKeys too; nil: this process's memory.
	TaskStore SharedTaskStore
	// Inbox carries to this replica the clients' answers to the requests
	// its plugin calls sent them that reach the other replicas
	// (SharedInbox), and from them those that reach this one; run
	// Server.FollowInbox to take them. It must go with a SessionStore and
	// shared RequestStateKeys. Nil: none.
	Inbox SharedInbox
	// Elicitations holds the URL elicitations in progress, shared with
	// the other replicas (SharedElicitations), so that any replica's
	// plugin call completes one; it must go with a SessionStore, Changes
	// and shared RequestStateKeys. Nil: only the replica that sent one.
	Elicitations SharedElicitations
	// StreamLog keeps the events of the SSE streams answering the
	// requests of 2025-era HTTP sessions (SharedStreamLog), so that a
	// client resumes a broken stream on any replica; run
	// Server.LogStreams to write them. It must go with a SessionStore and
	// shared RequestStateKeys. Nil: a stream resumes only on its replica.
	StreamLog SharedStreamLog
	// TaskLease is how long, with a TaskStore, this replica vouches for
	// each task it runs, renewing it a third of the way: a task whose
	// replica stopped renewing its lease for that long has failed (the
	// replica was lost), and whichever replica reads it first says so.
	// DefaultTaskLease when not positive.
	TaskLease time.Duration
	// Replica is how errors and logs name this replica to the others
	// (e.g. a task whose replica was lost); "" for the host name.
	Replica string
	// RequestStateTTL is how long a requestState is accepted after it was
	// issued; DefaultRequestStateTTL when not positive.
	RequestStateTTL time.Duration
	// CatalogChanges tells the server that its catalog may be replaced
	// while it serves (a watched plugins folder, a config reload):
	// 2026-07-28 discovery then declares listChanged for the lists it has,
	// and subscriptions/listen honours them. Without it, a list is
	// declared to change only when a plugin may announce changes to it.
	// (Legacy sessions are always told listChanged, as before.)
	CatalogChanges bool
	// TaskAfter is how long a 2026-07-28 call of a task-supporting tool
	// runs as a plain request before it becomes a task; DefaultTaskAfter
	// when not positive.
	TaskAfter time.Duration
	// MaxTasks bounds the tasks the server holds at once, of all users;
	// DefaultMaxTasks when not positive.
	MaxTasks int
	// MaxTasksPerUser bounds the tasks one user holds at once: the
	// authenticated subject, or without one a legacy session, or all
	// 2026-07-28 requests together; DefaultMaxTasksPerUser when not
	// positive.
	MaxTasksPerUser int
	// Observer, when set, is told of every request the server answers
	// (observer.go), for metrics. Nil costs nothing.
	Observer Observer
	// Tracer, when set, starts a span per request and per plugin call
	// (trace.go). Nil costs nothing.
	Tracer trace.Tracer
}

// Server answers MCP requests from the plugins of its catalog. It is safe for
// concurrent use by many sessions.
type Server struct {
	opts   Options
	logger *slog.Logger
	origin string // names this process in Options.Changes, Inbox and StreamLog: random
	// replica is how errors and logs name this replica to the others
	// (Options.Replica).
	replica string
	// streamLog writes the logged SSE streams (Options.StreamLog); nil
	// without one.
	streamLog *streamLogger
	// seal seals what the shared backends hold (sessions' and tasks'
	// records, the inbox's messages), derived once from stateKeys.
	seal    recordSeal
	catalog atomic.Pointer[Catalog]
	subs    subscriptions
	// listeners are the open subscriptions/listen of 2026-07-28 requests.
	listeners listeners

	sessions     sessionSet              // live sessions, for server-initiated notifications
	sessionStore sessionStore            // what each session negotiated (sessionstore.go)
	refreshMu    sync.Mutex              // serializes catalog swaps (listchanged.go)
	listChanges  listChangeDebounce      // pending notify_*_list_changed
	logLimits    logLimits               // notify_logging_message rate limits, per plugin
	elicitations urlElicitations         // URL elicitations in progress, per plugin
	tasks        taskSet                 // tasks of both eras (task.go, taskstore.go)
	remoteWaits  remoteWaits             // tasks/result here for tasks run elsewhere (sharedtaskwait.go)
	startup      atomic.Pointer[startup] // the initial load, once Loading was called (startup.go)
	swaps        swapSignal              // wakes requests waiting for a plugin still loading (startup.go)
	stateKeys    stateKeys               // sign the requestState of input_required results (requeststate.go)
	now          func() time.Time        // the clock of requestState expiry; nil: time.Now
	partial      atomic.Bool             // some HTTP endpoint serves only some plugins (visibility.go)
	workers      *gopool.Pool            // run the requests, on stacks grown by the requests before
}

// workerIdleFor is how long a request's goroutine waits for the next
// request before it ends, giving back its stack; at most 4 × GOMAXPROCS
// wait, so that what a burst of requests grew is given back when they
// end, as before the pool. (With one waiting, a request often came before
// the last one's worker was back waiting, and ran on a fresh goroutine.)
const workerIdleFor = 2 * time.Second

// defaultPageSize applies when Options.PageSize is not positive.
const defaultPageSize = 100

// NewServer returns a server for catalog.
func NewServer(opts Options, catalog *Catalog) *Server {
	if opts.PageSize <= 0 {
		opts.PageSize = defaultPageSize
	}
	if opts.Name == "" {
		opts.Name = "mcphost"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, logger: opts.Logger, sessionStore: newMemorySessionStore(), stateKeys: newStateKeys(opts.RequestStateKeys), workers: gopool.New(4*runtime.GOMAXPROCS(0), workerIdleFor)}
	s.tasks.store, s.tasks.maxTasks, s.tasks.maxPerUser = newMemoryTaskStore(), opts.MaxTasks, opts.MaxTasksPerUser
	if opts.SessionStore != nil || opts.TaskStore != nil || opts.Inbox != nil || opts.StreamLog != nil || opts.Elicitations != nil {
		s.seal = newRecordSeal(s.stateKeys)
	}
	if opts.SessionStore != nil {
		s.sessionStore = &sharedSessions{backend: opts.SessionStore, seal: s.seal, ttl: cmp.Or(max(opts.SessionTTL, 0), DefaultSessionTTL)}
	}
	origin := make([]byte, 9)
	_, _ = rand.Read(origin)
	s.origin = base64.RawURLEncoding.EncodeToString(origin)
	s.replica = opts.Replica
	if s.replica == "" {
		s.replica, _ = os.Hostname()
	}
	if opts.TaskStore != nil {
		s.tasks.store = &sharedTasks{backend: opts.TaskStore, seal: s.seal, logger: s.logger}
		s.tasks.lease = cmp.Or(max(opts.TaskLease, 0), DefaultTaskLease)
		s.tasks.replica = s.replica
	}
	if opts.StreamLog != nil {
		s.streamLog = newStreamLogger(s)
	}
	if catalog == nil {
		catalog = &Catalog{}
	}
	s.catalog.Store(catalog)
	return s
}

// subject returns the authenticated subject of a request's context.
func (s *Server) subject(ctx context.Context) string {
	if s.opts.Subject == nil {
		return ""
	}
	return s.opts.Subject(ctx)
}

// clock returns the time of requestState expiry.
func (s *Server) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// stateTTL is how long a requestState the server issues is accepted.
func (s *Server) stateTTL() time.Duration {
	if s.opts.RequestStateTTL > 0 {
		return s.opts.RequestStateTTL
	}
	return DefaultRequestStateTTL
}

// scopes returns the scopes of the token of a request's context.
func (s *Server) scopes(ctx context.Context) []string {
	if s.opts.Scopes == nil {
		return nil
	}
	return s.opts.Scopes(ctx)
}

// Catalog returns the catalog the server currently serves.
func (s *Server) Catalog() *Catalog { return s.catalog.Load() }
