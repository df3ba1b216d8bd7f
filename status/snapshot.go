package status

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pluginhost"
)

// Sources are what a snapshot reads of the server at that moment.
type Sources struct {
	// Version is mcphost's version; Started when the server started.
	Version string
	Started time.Time
	// Server gives the open sessions and the tasks.
	Server func() host.Stats
	// Plugins gives what each plugin that serves is and holds.
	Plugins func() []pluginhost.PluginStats
	// MemoryBudget gives the memory budget and what is held of it.
	MemoryBudget func() (limit, held uint64)
}

// Snapshot is the status of the server at a moment: /status.json.
type Snapshot struct {
	Version       string    `json:"version"`
	Time          time.Time `json:"time"`
	UptimeSeconds float64   `json:"uptimeSeconds"`
	// MemoryBudgetBytes and MemoryHeldBytes are the memory budget all
	// plugins share and what they hold of it.
	MemoryBudgetBytes uint64         `json:"memoryBudgetBytes"`
	MemoryHeldBytes   uint64         `json:"memoryHeldBytes"`
	Plugins           []Plugin       `json:"plugins"`
	Sessions          []Sessions     `json:"sessions"`
	Tasks             map[string]int `json:"tasks"`
	// Denials are the latest things the server denied, latest first.
	Denials []Denial `json:"denials"`
}

// Plugin is one plugin's row of the page.
type Plugin struct {
	Name          string   `json:"name"`
	Source        string   `json:"source"`
	SHA256        string   `json:"sha256"`
	ABI           int      `json:"abi"`
	Language      string   `json:"language"`
	Isolation     string   `json:"isolation"`
	AllowedHosts  []string `json:"allowedHosts"`
	HostFunctions []string `json:"hostFunctions"`
	Mounts        []string `json:"mounts"`
	ConfigKeys    []string `json:"configKeys"`
	Secrets       []string `json:"secrets"`
	Busy          int      `json:"busy"`
	Idle          int      `json:"idle"`
	Queued        int      `json:"queued"`
	Breaker       string   `json:"breaker"`
	// MemoryHeldBytes is what it holds of the memory budget, and
	// MemoryShare that as a share of the budget (0 to 1).
	MemoryHeldBytes uint64  `json:"memoryHeldBytes"`
	MemoryShare     float64 `json:"memoryShare"`
	// Calls and Errors count its calls of the last five minutes, and the
	// failed ones (a tool error is an answer); P50 and P99 their latency
	// in milliseconds; Recent the calls in each tenth of the window,
	// oldest first.
	Calls  int     `json:"calls"`
	Errors int     `json:"errors"`
	P50MS  float64 `json:"p50Ms"`
	P99MS  float64 `json:"p99Ms"`
	Recent []int   `json:"recent"`
	// LastError is its last failure within the window's memory, "" for
	// none, and LastErrorAt when.
	LastError   string     `json:"lastError"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
}

// Sessions counts the open sessions of a transport and protocol version.
type Sessions struct {
	Transport       string `json:"transport"`
	ProtocolVersion string `json:"protocolVersion"`
	Count           int    `json:"count"`
}

// Denial is one of the latest denials.
type Denial struct {
	Reason  string `json:"reason"`
	Detail  string `json:"detail"`
	Plugin  string `json:"plugin"`
	Item    string `json:"item"`
	Method  string `json:"method"`
	Subject string `json:"subject"`
	Session string `json:"session"`
}

// Snapshot returns the status now.
func (r *Recorder) Snapshot(src Sources) Snapshot {
	now := r.now()
	snap := Snapshot{Version: src.Version, Time: now.UTC(), UptimeSeconds: now.Sub(src.Started).Round(time.Second).Seconds(),
		Plugins: []Plugin{}, Sessions: []Sessions{}, Tasks: map[string]int{}, Denials: []Denial{}}
	if src.MemoryBudget != nil {
		snap.MemoryBudgetBytes, snap.MemoryHeldBytes = src.MemoryBudget()
	}
	if src.Plugins != nil {
		for _, s := range src.Plugins() {
			snap.Plugins = append(snap.Plugins, r.plugin(s, snap.MemoryBudgetBytes))
		}
	}
	if src.Server != nil {
		stats := src.Server()
		for kind, n := range stats.Sessions {
			snap.Sessions = append(snap.Sessions, Sessions{Transport: kind.Transport, ProtocolVersion: kind.ProtocolVersion, Count: n})
		}
		slices.SortFunc(snap.Sessions, func(a, b Sessions) int {
			return cmp.Or(cmp.Compare(a.Transport, b.Transport), cmp.Compare(a.ProtocolVersion, b.ProtocolVersion))
		})
		if stats.Tasks != nil {
			snap.Tasks = maps.Clone(stats.Tasks)
		}
	}
	for _, d := range r.latestDenials() {
		snap.Denials = append(snap.Denials, Denial{Reason: d.Reason, Detail: d.Detail, Plugin: d.Plugin, Item: d.Item,
			Method: d.Method, Subject: d.Subject, Session: d.Session})
	}
	return snap
}

// plugin returns the row of a plugin that holds s, of a memory budget of
// budget bytes.
func (r *Recorder) plugin(s pluginhost.PluginStats, budget uint64) Plugin {
	n, failures, p50, p99, spark, lastError, lastAt := r.recent(s.Name)
	p := Plugin{Name: s.Name, Source: s.Source, SHA256: s.SHA256, ABI: s.ABI, Language: s.Language, Isolation: s.Isolation,
		AllowedHosts: orEmpty(s.AllowedHosts), HostFunctions: orEmpty(s.HostFunctions), Mounts: orEmpty(s.Mounts),
		ConfigKeys: orEmpty(s.ConfigKeys), Secrets: orEmpty(s.Secrets),
		Busy: s.Busy, Idle: s.Idle, Queued: s.Waiting, Breaker: s.Breaker, MemoryHeldBytes: s.MemoryHeld,
		Calls: n, Errors: failures, P50MS: millis(p50), P99MS: millis(p99), Recent: spark, LastError: lastError}
	if budget > 0 {
		p.MemoryShare = float64(s.MemoryHeld) / float64(budget)
	}
	if !lastAt.IsZero() {
		at := lastAt.UTC()
		p.LastErrorAt = &at
	}
	return p
}

// orEmpty returns s, or an empty list for nil: JSON shows [] rather than
// null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1e3
}
