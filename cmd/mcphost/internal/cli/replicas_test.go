package cli

import (
	"reflect"
	"testing"
)

// TestCompareReplicasNamesEachPluginServedOtherwise compares a replica's
// plugins with two others': a plugin in another version on one, a plugin
// this one lacks, one it alone serves, and one all serve alike, which is
// not reported.
func TestCompareReplicasNamesEachPluginServedOtherwise(t *testing.T) {
	mine := map[string]string{"tools": "aa", "files": "ff", "mine": "11"}
	others := []replicaRecord{
		{Name: "b 10.0.0.2:8080", Plugins: map[string]string{"tools": "bb", "files": "ff", "extra": "ee"}},
		{Name: "c 10.0.0.3:8080", Plugins: map[string]string{"tools": "aa", "files": "ff", "extra": "ee", "mine": "11"}},
	}
	want := []pluginDifference{
		{Plugin: "extra", Here: "", Elsewhere: map[string][]string{"ee": {"b 10.0.0.2:8080", "c 10.0.0.3:8080"}}},
		{Plugin: "mine", Here: "11", Elsewhere: map[string][]string{"": {"b 10.0.0.2:8080"}}},
		{Plugin: "tools", Here: "aa", Elsewhere: map[string][]string{"bb": {"b 10.0.0.2:8080"}}},
	}
	if got := compareReplicas(mine, others); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := compareReplicas(mine, []replicaRecord{{Name: "d", Plugins: mine}}); len(got) != 0 {
		t.Errorf("a replica serving the same plugins: %+v, want no difference", got)
	}
}
