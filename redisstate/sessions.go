package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// A session's place (host.SharedSessionStore.Admit) is its member in two
// sorted sets by expiry time in milliseconds: the store's,
// <prefix>sessions, and its client's, <prefix>sessions:client:<client>,
// which <prefix>sessions:clients maps it to. Expired places are dropped
// when a session is admitted; touching a session's record moves its
// places' expiry with it.

// admitSession drops expired places, checks the bounds and takes a place,
// atomically. KEYS: the store's set, the client's set, the map. ARGV: now
// (ms), ttl (ms), most, per client, id, client, the client sets' key
// prefix. Returns "", "all" or "client".
var admitSession = redis.NewScript(`
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE')) do
  local client = redis.call('HGET', KEYS[3], id)
  if client then redis.call('ZREM', ARGV[7] .. client, id) end
  redis.call('HDEL', KEYS[3], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 'all' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 'client' end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[5])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[6])
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return ''
`)

// touchSession slides a session's record and places. KEYS: the record,
// the store's set, the map. ARGV: now (ms), ttl (ms), id, the client sets'
// key prefix. Returns 1 when the record exists.
var touchSession = redis.NewScript(`
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
if redis.call('PEXPIRE', KEYS[1], ttl) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 'XX', now + ttl, ARGV[3])
local client = redis.call('HGET', KEYS[3], ARGV[3])
if client then redis.call('ZADD', ARGV[4] .. client, 'XX', now + ttl, ARGV[3]) end
for i = 2, 3 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return 1
`)

// deleteSession removes a session's record and places. KEYS: the record,
// the store's set, the map. ARGV: id, the client sets' key prefix.
var deleteSession = redis.NewScript(`
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local client = redis.call('HGET', KEYS[3], ARGV[1])
if client then redis.call('ZREM', ARGV[2] .. client, ARGV[1]) end
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`)

func (s *Store) sessionsKey() string       { return s.prefix + "sessions" }
func (s *Store) sessionClientsKey() string { return s.prefix + "sessions:clients" }
func (s *Store) clientSessionsPrefix() string {
	return s.prefix + "sessions:client:"
}

// Admit takes a place for a new session unless a bound refuses it: then
// it returns "all" or "client" (host.SharedSessionStore).
func (s *Store) Admit(ctx context.Context, id, client string, ttl time.Duration, most, perClient int) (string, error) {
	refused, err := admitSession.Run(ctx, s.client,
		[]string{s.sessionsKey(), s.clientSessionsPrefix() + client, s.sessionClientsKey()},
		time.Now().UnixMilli(), max(ttl.Milliseconds(), 1), most, perClient, id, client, s.clientSessionsPrefix()).Text()
	return refused, s.wrap(err)
}

// elicitationKey is the key of a URL elicitation in progress.
func (s *Store) elicitationKey(key string) string { return s.prefix + "elicitation:" + key }

// Hold keeps value under key for ttl (host.SharedElicitations).
func (s *Store) Hold(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := s.fits("a URL elicitation", value); err != nil {
		return err
	}
	return s.wrap(s.client.Set(ctx, s.elicitationKey(key), value, ttl).Err())
}

// Take removes the value under key and returns it, in one script: of
// replicas taking one key at once, one gets it (host.SharedElicitations).
func (s *Store) Take(ctx context.Context, key string) ([]byte, bool, error) {
	return s.read(ctx, s.elicitationKey(key), true)
}
