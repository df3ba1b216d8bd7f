package redisstate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The list changes of the replicas go through a stream,
// <prefix>changes, of the last changesKept entries, which expires
// changesTTL after the last change.
const (
	changesKept = 100
	changesTTL  = time.Hour
	// changesWait bounds each blocking read of the stream.
	changesWait = time.Second
)

func (s *Store) changesKey() string { return s.prefix + "changes" }

// Publish adds a change of the replica origin to the stream
// (host.SharedChanges).
func (s *Store) Publish(ctx context.Context, origin string, change []byte) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: s.changesKey(), MaxLen: changesKept, Approx: true, Values: []any{"origin", origin, "change", change}})
		p.PExpire(ctx, s.changesKey(), changesTTL)
		return nil
	})
	return s.wrap(err)
}

// Follow calls each with the changes other replicas than origin add to
// the stream from now on, until ctx ends (host.SharedChanges).
func (s *Store) Follow(ctx context.Context, origin string, each func(change []byte)) error {
	last := "0-0"
	newest, err := s.client.XRevRangeN(ctx, s.changesKey(), "+", "-", 1).Result()
	if err != nil {
		return s.wrap(err)
	}
	if len(newest) == 1 {
		last = newest[0].ID
	}
	for ctx.Err() == nil {
		streams, err := s.client.XRead(ctx, &redis.XReadArgs{Streams: []string{s.changesKey(), last}, Count: changesKept, Block: changesWait}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue // nothing new within changesWait
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return s.wrap(err)
		}
		for _, stream := range streams {
			for _, m := range stream.Messages {
				last = m.ID
				from, _ := m.Values["origin"].(string)
				change, _ := m.Values["change"].(string)
				if from != origin && change != "" {
					each([]byte(change))
				}
			}
		}
	}
	return nil
}
