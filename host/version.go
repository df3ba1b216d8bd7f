package host

import "slices"

// Protocol versions mcphost speaks, newest first.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
)

// perRequestVersions lists the protocol versions mcphost serves per request,
// without initialize (era20260728.go), newest first.
var perRequestVersions = []string{Version20260728}

// supportedVersions lists the protocol versions mcphost negotiates with
// initialize, newest first.
var supportedVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// SupportedVersions returns the protocol versions mcphost negotiates,
// newest first.
func SupportedVersions() []string { return slices.Clone(supportedVersions) }

// LatestVersion is the version initialize offers to clients that ask for
// one it does not negotiate.
const LatestVersion = Version20251125

// negotiateVersion answers a client's requested version: the same version
// when supported, else the latest.
func negotiateVersion(requested string) string {
	if slices.Contains(supportedVersions, requested) {
		return requested
	}
	return LatestVersion
}

// atLeast reports whether negotiated version v is the same as or newer than
// min. Versions are dates, so they compare as strings.
func atLeast(v, min string) bool { return v >= min }
