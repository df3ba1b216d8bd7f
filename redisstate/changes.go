package redisstate

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The list changes of the replicas go through a stream,
// <prefix>changes, of the last changesKept entries, which expires
// changesTTL after the last change. Each replica has an inbox, the stream
// <prefix>inbox:<replica>, of the last inboxKept messages, which expires
// inboxTTL after the last.
const (
	changesKept = 100
	changesTTL  = time.Hour
	inboxKept   = 1000
	inboxTTL    = 10 * time.Minute
	// The SSE stream logs keep about their last streamLogKept entries
	// and expire streamLogTTL after the last (host.SharedStreamLog).
	streamLogKept = 1000
	streamLogTTL  = 5 * time.Minute
	// followWait bounds each blocking read of a stream.
	followWait = time.Second
)

func (s *Store) changesKey() string             { return s.prefix + "changes" }
func (s *Store) inboxKey(replica string) string { return s.prefix + "inbox:" + replica }

// Publish adds a change of the replica origin to the stream
// (host.SharedChanges).
func (s *Store) Publish(ctx context.Context, origin string, change []byte) error {
	return s.appendTo(ctx, s.changesKey(), changesKept, changesTTL, "origin", origin, "change", change)
}

// Follow calls each with the changes other replicas than origin add to
// the stream from now on, until ctx ends (host.SharedChanges).
func (s *Store) Follow(ctx context.Context, origin string, each func(change []byte)) error {
	return s.follow(ctx, s.client, s.changesKey(), false, func(values map[string]any) {
		from, _ := values["origin"].(string)
		change, _ := values["change"].(string)
		if from != origin && change != "" {
			each([]byte(change))
		}
	})
}

// Send adds msg to the inbox of the replica to (host.SharedInbox).
func (s *Store) Send(ctx context.Context, to string, msg []byte) error {
	if err := s.fits("a message", msg); err != nil {
		return err
	}
	return s.appendTo(ctx, s.inboxKey(to), inboxKept, inboxTTL, "msg", msg)
}

// Receive calls each with the messages sent to the inbox of me, until ctx
// ends (host.SharedInbox): all it holds, since a replica's name is new
// with its process and nothing was sent to it before it was known, then
// those sent from now on.
func (s *Store) Receive(ctx context.Context, me string, each func(msg []byte)) error {
	return s.follow(ctx, s.client, s.inboxKey(me), true, func(values map[string]any) {
		if msg, _ := values["msg"].(string); msg != "" {
			each([]byte(msg))
		}
	})
}

// appendTo adds an entry of values to the stream key, which keeps about
// its last kept entries and expires ttl after the last.
func (s *Store) appendTo(ctx context.Context, key string, kept int64, ttl time.Duration, values ...any) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: kept, Approx: true, Values: values})
		p.PExpire(ctx, key, ttl)
		return nil
	})
	return s.wrap(err)
}

// follow calls each with the values of the entries added to the stream key
// from now on (or, fromStart, of all it holds first), until ctx ends, on
// the connections of client.
func (s *Store) follow(ctx context.Context, client *redis.Client, key string, fromStart bool, each func(values map[string]any)) error {
	last := "0-0"
	if !fromStart {
		newest, err := client.XRevRangeN(ctx, key, "+", "-", 1).Result()
		if err != nil {
			return s.wrap(err)
		}
		if len(newest) == 1 {
			last = newest[0].ID
		}
	}
	for ctx.Err() == nil {
		streams, err := client.XRead(ctx, &redis.XReadArgs{Streams: []string{key, last}, Count: changesKept, Block: followWait}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue // nothing new within followWait
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return s.wrap(err)
		}
		for _, stream := range streams {
			for _, m := range stream.Messages {
				last = m.ID
				each(m.Values)
			}
		}
	}
	return nil
}

func (s *Store) streamLogKey(log string) string { return s.prefix + "sse:" + log }

// Append adds each entry to its stream log, in one round trip
// (host.SharedStreamLog): the stream <prefix>sse:<log>, of about the last
// streamLogKept entries, which expires streamLogTTL after the last. An
// entry longer than a value may be is left out, and named in the error.
func (s *Store) Append(ctx context.Context, logs []string, entries [][]byte) error {
	var tooLong error
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range entries {
			if err := s.fits("a stream log entry", e); err != nil {
				tooLong = err
				continue
			}
			key := s.streamLogKey(logs[i])
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: streamLogKept, Approx: true, Values: []any{"e", e}})
			p.PExpire(ctx, key, streamLogTTL)
		}
		return nil
	})
	return cmp.Or(s.wrap(err), tooLong)
}

// Read calls each with the entries of the stream log log, all it holds
// then those appended from now on, until ctx ends (host.SharedStreamLog).
func (s *Store) Read(ctx context.Context, log string, each func(entry []byte)) error {
	return s.follow(ctx, s.logReads, s.streamLogKey(log), true, func(values map[string]any) {
		if e, _ := values["e"].(string); e != "" {
			each([]byte(e))
		}
	})
}
