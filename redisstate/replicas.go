package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The replicas of a service say what they serve (the digests of their
// plugins) in records of their own, <prefix>replica:<id>, each with a TTL,
// listed in a sorted set, <prefix>replicas, by expiry time (by the
// server's clock, in milliseconds). The set expires with its
// longest-lived record; a member past its time is dropped the next time a
// replica announces itself.

// mostReplicas bounds the records an announcement returns.
const mostReplicas = 1000

// announce stores a replica's record and returns the other live
// replicas' records. KEYS: the set. ARGV: replica, record, ttl (ms), the
// records' key prefix, most records.
var announce = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SET', ARGV[4] .. ARGV[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[5]) - 1)) do
  if id ~= ARGV[1] then
    local record = redis.call('GET', ARGV[4] .. id)
    if record then table.insert(out, record) end
  end
end
return out
`)

func (s *Store) replicasKey() string      { return s.prefix + "replicas" }
func (s *Store) replicaKeyPrefix() string { return s.prefix + "replica:" }

// Announce stores this Store's replica's record (what it serves, opaque to
// the store) for ttl, and returns the records the other replicas
// announced within theirs, at most a thousand.
func (s *Store) Announce(ctx context.Context, record []byte, ttl time.Duration) ([][]byte, error) {
	reply, err := announce.Run(ctx, s.client, []string{s.replicasKey()},
		s.replica, record, max(ttl.Milliseconds(), 1), s.replicaKeyPrefix(), mostReplicas).StringSlice()
	if err != nil {
		return nil, s.wrap(err)
	}
	out := make([][]byte, len(reply))
	for i, r := range reply {
		out[i] = []byte(r)
	}
	return out, nil
}

// Withdraw removes this Store's replica's record, as a replica that stops
// does.
func (s *Store) Withdraw(ctx context.Context) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.replicasKey(), s.replica)
		p.Del(ctx, s.replicaKeyPrefix()+s.replica)
		return nil
	})
	return s.wrap(err)
}
