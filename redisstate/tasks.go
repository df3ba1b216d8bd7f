package redisstate

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A task is its record, at <prefix>task:<id> with the task's TTL, and its
// place in two sorted sets: its owner's, <prefix>tasks:owner:<owner>, by
// number (the order tasks/list gives), and the store's,
// <prefix>tasks:all, by expiry time in milliseconds (what max_tasks
// counts). The sets expire with their longest-lived task; a member whose
// record expired is dropped the next time its set is read. The numbers
// come from <prefix>tasks:seq.

// createTask checks the bounds and stores a task, atomically.
// KEYS: record, owner set, store set, counter. ARGV: record, ttl (ms), most,
// per owner, now (ms), id, the records' key prefix. Returns the task's
// number, or -1 (owner's bound) or -2 (store's bound).
var createTask = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if redis.call('EXISTS', ARGV[7] .. id) == 0 then redis.call('ZREM', KEYS[2], id) end
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[3]) then return -2 end
local seq = redis.call('INCR', KEYS[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], seq, ARGV[6])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]) + tonumber(ARGV[2]), ARGV[6])
for i = 2, 4 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
return seq
`)

// replaceTask replaces a record that is still what the caller read,
// keeping its TTL. KEYS: record. ARGV: old, new. Returns 1 when replaced.
var replaceTask = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`)

// listTasks returns an owner's tasks numbered after a number: id, number
// and record of each, up to a count, and whether more follow, dropping
// those whose record expired and leaving out those longer than a cap.
// KEYS: owner set. ARGV: after, count, the records' key prefix, the cap
// (0: none).
var listTasks = redis.NewScript(`
local out, want, cap = {}, tonumber(ARGV[2]), tonumber(ARGV[4])
local after = '(' .. ARGV[1]
while true do
  local page = redis.call('ZRANGE', KEYS[1], after, '+inf', 'BYSCORE', 'LIMIT', 0, want + 1, 'WITHSCORES')
  if #page == 0 then return {0, out} end
  for i = 1, #page, 2 do
    local id, seq = page[i], page[i + 1]
    after = '(' .. seq
    local rec = redis.call('GET', ARGV[3] .. id)
    if not rec then
      redis.call('ZREM', KEYS[1], id)
    elseif cap > 0 and #rec > cap then
      -- longer than any record a replica writes: left out
    elseif #out / 3 == want then
      return {1, out}
    else
      table.insert(out, id); table.insert(out, seq); table.insert(out, rec)
    end
  end
end
`)

func (s *Store) taskKey(id string) string          { return s.prefix + "task:" + id }
func (s *Store) ownerTasksKey(owner string) string { return s.prefix + "tasks:owner:" + owner }

// CreateTask stores a task unless a bound refuses it: then it returns
// "owner" or "store" (host.SharedTaskStore).
func (s *Store) CreateTask(ctx context.Context, id, owner string, record []byte, ttl time.Duration, most, perOwner int) (uint64, string, error) {
	if err := s.fits("a task's record", record); err != nil {
		return 0, "", err
	}
	n, err := createTask.Run(ctx, s.client,
		[]string{s.taskKey(id), s.ownerTasksKey(owner), s.prefix + "tasks:all", s.prefix + "tasks:seq"},
		record, max(ttl.Milliseconds(), 1), most, perOwner, time.Now().UnixMilli(), id, s.prefix+"task:").Int64()
	switch {
	case err != nil:
		return 0, "", s.wrap(err)
	case n == -1:
		return 0, "owner", nil
	case n == -2:
		return 0, "store", nil
	}
	return uint64(n), "", nil
}

// LoadTask returns a task's record (host.SharedTaskStore).
func (s *Store) LoadTask(ctx context.Context, id string) ([]byte, bool, error) {
	return s.get(ctx, s.taskKey(id))
}

// ReplaceTask replaces a task's record if it is still old
// (host.SharedTaskStore).
func (s *Store) ReplaceTask(ctx context.Context, id string, old, record []byte) (bool, error) {
	if err := s.fits("a task's record", record); err != nil {
		return false, err
	}
	n, err := replaceTask.Run(ctx, s.client, []string{s.taskKey(id)}, old, record).Int()
	return n == 1, s.wrap(err)
}

// ListTasks calls each with an owner's tasks after a number
// (host.SharedTaskStore).
func (s *Store) ListTasks(ctx context.Context, owner string, after uint64, limit int, each func(id string, seq uint64, record []byte)) (bool, error) {
	reply, err := listTasks.Run(ctx, s.client, []string{s.ownerTasksKey(owner)}, after, limit, s.prefix+"task:", s.maxValue).Slice()
	if err != nil {
		return false, s.wrap(err)
	}
	if len(reply) != 2 {
		return false, s.wrap(errors.New("listing tasks: a reply of another shape"))
	}
	more, ok1 := reply[0].(int64)
	items, ok2 := reply[1].([]any)
	if !ok1 || !ok2 || len(items)%3 != 0 {
		return false, s.wrap(errors.New("listing tasks: a reply of another shape"))
	}
	for i := 0; i < len(items); i += 3 {
		id, ok1 := items[i].(string)
		seqText, ok2 := items[i+1].(string)
		rec, ok3 := items[i+2].(string)
		seq, err := strconv.ParseUint(seqText, 10, 64)
		if !ok1 || !ok2 || !ok3 || err != nil {
			return false, s.wrap(errors.New("listing tasks: an entry of another shape"))
		}
		each(id, seq, []byte(rec))
	}
	return more == 1, nil
}

// RemoveTask removes a task (host.SharedTaskStore).
func (s *Store) RemoveTask(ctx context.Context, id, owner string) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.taskKey(id))
		p.ZRem(ctx, s.ownerTasksKey(owner), id)
		p.ZRem(ctx, s.prefix+"tasks:all", id)
		return nil
	})
	return s.wrap(err)
}
