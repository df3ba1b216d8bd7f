// Package redisstate keeps in Redis the state that the replicas of one
// mcphost service share ([state] backend = "redis"): the records of
// 2025-era sessions (host.SharedSessionStore) and of tasks
// (host.SharedTaskStore), the replicas' list changes (host.SharedChanges),
// the clients' answers and stream messages passed between them
// (host.SharedInbox), the logs of the SSE streams (host.SharedStreamLog),
// the URL elicitations in progress (host.SharedElicitations), and their
// demands on each plugin's rate limit (pluginhost.RateShares). Every key starts with the configured prefix and
// has a TTL; values are opaque, sealed by the host. It runs on Redis 7.0
// and uses only commands it has.
package redisstate

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure Open.
type Options struct {
	// URL is the server's redis:// or rediss:// (TLS) URL, with an ACL
	// user if any, without a password.
	URL string
	// Password is the user's password (or the server's requirepass);
	// empty for none.
	Password string
	// Prefix starts every key.
	Prefix string
	// TLS configures a rediss:// connection; nil: the system's roots.
	TLS *tls.Config
	// RoundTrip, when set, is called before each round trip to the server
	// with the command's name ("pipeline" for a transaction): a script
	// and the commands it runs are one.
	RoundTrip func(command string)
	// MaxValueBytes caps every value the store writes and reads: a
	// longer one is refused, and one found in Redis is not read (whoever
	// can write to Redis could otherwise make a replica allocate what they
	// like); 0 for no cap.
	MaxValueBytes int64
	// Logger receives, at debug level, what the Redis client logs of its
	// connections (a dial that failed, a connection dropped); nil
	// discards it. The client has one logger in a process: the first
	// Store opened sets it.
	Logger *slog.Logger
}

// clientLog is where the Redis client logs (Options.Logger), set once.
var clientLog sync.Once

// clientLogger passes the Redis client's log lines to a slog.Logger.
type clientLogger struct{ l *slog.Logger }

func (c clientLogger) Printf(ctx context.Context, format string, v ...any) {
	c.l.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}

// Store is a connection pool to one Redis server.
type Store struct {
	client *redis.Client
	// logReads reads the stream logs (Read), at most maxLogReads at once.
	logReads *redis.Client
	prefix   string
	addr     string // host:port, which errors name
	// replica names this process among the replicas (Share): random,
	// drawn at Open.
	replica string
	// maxValue is Options.MaxValueBytes.
	maxValue int64
}

// Timeouts of a connection and of each command: a Redis that does not
// answer fails a request in seconds rather than holding it.
const (
	dialTimeout    = 2 * time.Second
	commandTimeout = 2 * time.Second
	// maxLogReads bounds the stream logs read at once (Read): one more
	// waits a second for one to end, then fails.
	maxLogReads = 32
)

// Open returns a Store for the server at opts.URL. It does not connect:
// Ping does.
func Open(opts Options) (*Store, error) {
	clientLog.Do(func() {
		l := opts.Logger
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		redis.SetLogger(clientLogger{l})
	})
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, fmt.Errorf("redisstate: %q is not a redis:// or rediss:// URL", opts.URL)
	}
	ro := &redis.Options{
		Addr:         u.Host,
		Username:     u.User.Username(),
		Password:     opts.Password,
		DialTimeout:  dialTimeout,
		ReadTimeout:  commandTimeout,
		WriteTimeout: commandTimeout,
		MaxRetries:   1,
		// A Redis that refuses connections fails a request at once, not
		// after the client's default five dials 100 ms apart.
		DialerRetries:      1,
		DialerRetryTimeout: 50 * time.Millisecond,
		DisableIdentity:    true, // CLIENT SETINFO is newer than Redis 7.0
		Protocol:           2,
	}
	if db := u.Path; len(db) > 1 {
		if ro.DB, err = strconv.Atoi(db[1:]); err != nil {
			return nil, fmt.Errorf("redisstate: %q: the database is not a number", opts.URL)
		}
	}
	if u.Scheme == "rediss" {
		ro.TLSConfig = opts.TLS
		if ro.TLSConfig == nil {
			ro.TLSConfig = &tls.Config{}
		}
		ro.TLSConfig = ro.TLSConfig.Clone()
		if ro.TLSConfig.ServerName == "" {
			ro.TLSConfig.ServerName = u.Hostname()
		}
		ro.TLSConfig.MinVersion = max(ro.TLSConfig.MinVersion, tls.VersionTLS12)
	}
	client := redis.NewClient(ro)
	// The stream logs' reads, which a client's resumptions start and
	// which block, have connections of their own: however many it starts,
	// the other commands find theirs.
	lo := *ro
	lo.PoolSize, lo.PoolTimeout = maxLogReads, time.Second
	logReads := redis.NewClient(&lo)
	if opts.RoundTrip != nil {
		client.AddHook(roundTripHook(opts.RoundTrip))
		logReads.AddHook(roundTripHook(opts.RoundTrip))
	}
	return &Store{client: client, logReads: logReads, prefix: opts.Prefix, addr: u.Host, replica: rand.Text(), maxValue: opts.MaxValueBytes}, nil
}

// roundTripHook calls itself with the name of each round trip's command.
type roundTripHook func(command string)

func (h roundTripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h roundTripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h(cmd.Name())
		return next(ctx, cmd)
	}
}

func (h roundTripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h("pipeline")
		return next(ctx, cmds)
	}
}

// Ping checks that the server answers and takes the login.
func (s *Store) Ping(ctx context.Context) error {
	return s.wrap(s.client.Ping(ctx).Err())
}

// Close closes the connections.
func (s *Store) Close() error { return errors.Join(s.client.Close(), s.logReads.Close()) }

// wrap names the server in err, which says what failed.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redis at %s: %w", s.addr, err)
}

// sessionKey is the key of session id's record.
func (s *Store) sessionKey(id string) string { return s.prefix + "session:" + id }

// Load returns the record of session id (host.SharedSessionStore).
func (s *Store) Load(ctx context.Context, id string) ([]byte, bool, error) {
	return s.get(ctx, s.sessionKey(id))
}

// getCapped returns the value of a key unless it is longer than a cap:
// then its length; with "take", it deletes the value it returns. KEYS: the
// key. ARGV: the cap (-1: none), "take" or "".
var getCapped = redis.NewScript(`
local n = redis.call('STRLEN', KEYS[1])
if tonumber(ARGV[1]) >= 0 and n > tonumber(ARGV[1]) then return n end
local v = redis.call('GET', KEYS[1])
if v and ARGV[2] == 'take' then redis.call('DEL', KEYS[1]) end
return v
`)

// get returns the value of key, and whether there is one; a value longer
// than the cap is an error, and is not read.
func (s *Store) get(ctx context.Context, key string) ([]byte, bool, error) {
	return s.read(ctx, key, false)
}

// read is get, which with take also deletes the value it returns, at
// once: of two replicas taking one key, one gets it.
func (s *Store) read(ctx context.Context, key string, take bool) ([]byte, bool, error) {
	var reply any
	var err error
	switch {
	case s.maxValue > 0 || take:
		limit, mode := s.maxValue, ""
		if limit <= 0 {
			limit = -1
		}
		if take {
			mode = "take"
		}
		reply, err = getCapped.Run(ctx, s.client, []string{key}, limit, mode).Result()
	default:
		reply, err = s.client.Get(ctx, key).Result()
	}
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(err)
	}
	switch v := reply.(type) {
	case string:
		return []byte(v), true, nil
	case int64:
		return nil, false, s.wrap(fmt.Errorf("%s holds %d bytes, more than the %d a value may (refused unread)", key, v, s.maxValue))
	}
	return nil, false, s.wrap(fmt.Errorf("%s: a reply of another shape", key))
}

// fits refuses a value longer than the cap, naming what it is.
func (s *Store) fits(what string, value []byte) error {
	if s.maxValue > 0 && int64(len(value)) > s.maxValue {
		return s.wrap(fmt.Errorf("%s of %d bytes is more than the %d a value may hold", what, len(value), s.maxValue))
	}
	return nil
}

// Save creates or replaces the record of session id, for ttl
// (host.SharedSessionStore).
func (s *Store) Save(ctx context.Context, id string, record []byte, ttl time.Duration) error {
	if err := s.fits("a session's record", record); err != nil {
		return err
	}
	return s.wrap(s.client.Set(ctx, s.sessionKey(id), record, ttl).Err())
}

// Touch keeps the record of session id for ttl from now, and reports
// whether there is one (host.SharedSessionStore).
func (s *Store) Touch(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	n, err := touchSession.Run(ctx, s.client, []string{s.sessionKey(id), s.sessionsKey(), s.sessionClientsKey()},
		time.Now().UnixMilli(), max(ttl.Milliseconds(), 1), id, s.clientSessionsPrefix()).Int()
	return n == 1, s.wrap(err)
}

// Delete removes the record and the places of session id
// (host.SharedSessionStore).
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.wrap(deleteSession.Run(ctx, s.client, []string{s.sessionKey(id), s.sessionsKey(), s.sessionClientsKey()},
		id, s.clientSessionsPrefix()).Err())
}
