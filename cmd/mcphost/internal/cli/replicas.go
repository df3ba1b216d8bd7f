package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// Replicas of one service should serve the same plugins: each announces
// the digests of the plugins it serves through the shared backend every
// announceEvery (a record lasting announceTTL), and learns the others',
// so that one serving another version of a plugin, or lacking one, says
// so in its log and in /readyz. A difference is reported, not refused: a
// roll-out of a plugin passes through one.
const (
	announceEvery = 2 * time.Second
	announceTTL   = 3 * announceEvery
	// mostRecordBytes bounds a record read back from the backend, which
	// whoever can write to it can forge.
	mostRecordBytes = 1 << 20
)

// replicaRecord is what a replica announces: its name (host and listen
// address) and the SHA-256 of each plugin it serves, by name.
type replicaRecord struct {
	Name    string            `json:"name"`
	Plugins map[string]string `json:"plugins"`
}

// pluginDifference is a plugin that other replicas serve in another
// version than this one, or that only some serve.
type pluginDifference struct {
	Plugin string `json:"plugin"`
	// Here is the digest this replica serves, "" for none.
	Here string `json:"here"`
	// Elsewhere names, by digest ("" for none), the other replicas that
	// serve it so.
	Elsewhere map[string][]string `json:"elsewhere"`
}

// replicaName is how the other replicas' logs name this one: its host
// and listen address (its process id on stdio).
func replicaName(ln net.Listener) string {
	host, _ := os.Hostname()
	if ln == nil {
		return fmt.Sprintf("%s pid %d", host, os.Getpid())
	}
	return host + " " + ln.Addr().String()
}

// compareReplicas returns, in order of plugin name, the plugins that some
// of others serve otherwise than mine does.
func compareReplicas(mine map[string]string, others []replicaRecord) []pluginDifference {
	names := map[string]bool{}
	for name := range mine {
		names[name] = true
	}
	for _, o := range others {
		for name := range o.Plugins {
			names[name] = true
		}
	}
	var out []pluginDifference
	for _, name := range slices.Sorted(maps.Keys(names)) {
		d := pluginDifference{Plugin: name, Here: mine[name], Elsewhere: map[string][]string{}}
		for _, o := range others {
			if there := o.Plugins[name]; there != d.Here {
				d.Elsewhere[there] = append(d.Elsewhere[there], o.Name)
			}
		}
		if len(d.Elsewhere) > 0 {
			for _, replicas := range d.Elsewhere {
				slices.Sort(replicas)
			}
			out = append(out, d)
		}
	}
	return out
}

// comparePlugins announces what this replica, called name, serves every
// announceEvery until ctx ends, once serving says its first load is done,
// and keeps how it compares with the other replicas for /readyz, logging
// each change.
func (s *sharedState) comparePlugins(ctx context.Context, name string, serving func() (done bool, digests map[string]string)) {
	if s == nil {
		return
	}
	tick := time.NewTicker(announceEvery)
	defer tick.Stop()
	for {
		if done, digests := serving(); done {
			s.announce(ctx, replicaRecord{Name: name, Plugins: digests})
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// announce announces mine and compares it with the other replicas'
// records.
func (s *sharedState) announce(ctx context.Context, mine replicaRecord) {
	record, err := json.Marshal(mine)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	raw, err := s.store.Announce(ctx, record, announceTTL)
	if err != nil {
		return // the monitor logs the backend's outage; the last comparison stands
	}
	var others []replicaRecord
	for _, r := range raw {
		var o replicaRecord
		if len(r) <= mostRecordBytes && json.Unmarshal(r, &o) == nil && o.Name != "" {
			others = append(others, o)
		}
	}
	differ := compareReplicas(mine.Plugins, others)
	s.mu.Lock()
	changed := !slices.EqualFunc(differ, s.differ, sameDifference)
	s.differ, s.replicas = differ, len(others)+1
	s.mu.Unlock()
	if !changed {
		return
	}
	if len(differ) == 0 {
		s.logger.Info("every replica serves the same plugins", "replicas", len(others)+1)
	}
	for _, d := range differ {
		var elsewhere []string
		for _, digest := range slices.Sorted(maps.Keys(d.Elsewhere)) {
			elsewhere = append(elsewhere, orNone(digest)+" on "+strings.Join(d.Elsewhere[digest], ", "))
		}
		s.logger.Warn("another replica serves another version of a plugin: give every replica the same plugins (a lock file, or the same folder)",
			"plugin", d.Plugin, "here", orNone(d.Here), "elsewhere", strings.Join(elsewhere, "; "))
	}
}

// sameDifference reports whether a and b say the same.
func sameDifference(a, b pluginDifference) bool {
	return a.Plugin == b.Plugin && a.Here == b.Here &&
		maps.EqualFunc(a.Elsewhere, b.Elsewhere, slices.Equal[[]string])
}

// orNone is a digest as a log line shows it: "none" for a plugin not
// served.
func orNone(digest string) string {
	if digest == "" {
		return "none"
	}
	return "sha256:" + digest
}
