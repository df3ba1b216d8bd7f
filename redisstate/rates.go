package redisstate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The replicas that hold a limit (pluginhost.RateShares) are the fields of
// a hash, <prefix>rate:<key>, one per replica: its demand, when the demand
// ends and when the replica stops holding the limit, by the server's clock
// in milliseconds. The hash expires with its longest-lived field; a field
// past its presence is dropped the next time a replica records its demand.

// shareRate records a replica's demand and sums the live ones. KEYS: the
// hash. ARGV: replica, demand, demand TTL (ms), presence TTL (ms). Returns
// the sum (a string: Redis truncates Lua numbers) and the count of the
// replicas present.
var shareRate = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. (now + tonumber(ARGV[3])) .. ' ' .. (now + tonumber(ARGV[4])))
local total, n = 0, 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local demand, ends, holds = string.match(fields[i + 1], '^(%S+) (%d+) (%d+)$')
  if holds == nil or tonumber(demand) == nil or tonumber(holds) <= now then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    if tonumber(ends) > now then total = total + tonumber(demand) end
    n = n + 1
  end
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {tostring(total), n}
`)

// Share records that this Store's replica was asked demand calls a second
// of the limit named key, counting for demandTTL, and that it holds the
// limit for presenceTTL; it returns the demands that count, summed, and
// how many replicas hold the limit (pluginhost.RateShares).
func (s *Store) Share(ctx context.Context, key string, demand float64, demandTTL, presenceTTL time.Duration) (float64, int, error) {
	reply, err := shareRate.Run(ctx, s.client, []string{s.prefix + "rate:" + key},
		s.replica, strconv.FormatFloat(demand, 'g', -1, 64), max(demandTTL.Milliseconds(), 1), max(presenceTTL.Milliseconds(), 1)).Slice()
	if err != nil {
		return 0, 0, s.wrap(err)
	}
	if len(reply) == 2 {
		text, _ := reply[0].(string)
		n, _ := reply[1].(int64)
		if total, err := strconv.ParseFloat(text, 64); err == nil && n >= 1 {
			return total, int(n), nil
		}
	}
	return 0, 0, s.wrap(fmt.Errorf("the demand script answered %v", reply))
}
