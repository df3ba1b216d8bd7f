//go:build wasip1

package main

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type textStatsArgs struct {
	Text            string `json:"text" description:"The text to analyse"`
	Top             int    `json:"top,omitempty" jsonschema:"minimum=0,maximum=100,default=10,description=How many of the most frequent words to return"`
	IgnoreStopwords bool   `json:"ignore_stopwords,omitempty" description:"Leave common English words (the, and, of...) out of the most frequent words"`
}

// WordCount is a word and how often it occurs.
type WordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// TextStats is the structured output of text_stats.
type TextStats struct {
	Lines             int         `json:"lines" description:"Number of lines (a final line without newline counts)"`
	Words             int         `json:"words"`
	UniqueWords       int         `json:"unique_words" description:"Distinct words, ignoring case"`
	Characters        int         `json:"characters" description:"Unicode code points"`
	Bytes             int         `json:"bytes" description:"UTF-8 bytes"`
	Sentences         int         `json:"sentences"`
	AverageWordLength float64     `json:"average_word_length" description:"Mean word length in characters, rounded to 2 decimals"`
	TopWords          []WordCount `json:"top_words" description:"Most frequent words, most frequent first"`
}

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further had
		has have having he her here hers herself him himself his how i if in into is it its itself just me more most my
		myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such
		than that the their theirs them themselves then there these they this those through to too under until up very
		was we were what when where which while who whom why will with would you your yours yourself yourselves`) {
		stopwords[w] = true
	}
}

func textStats(_ *pdk.Context, a textStatsArgs) (TextStats, error) {
	top := a.Top
	if top == 0 {
		top = 10
	}
	s := TextStats{
		Characters: utf8.RuneCountInString(a.Text),
		Bytes:      len(a.Text),
		TopWords:   []WordCount{},
	}
	if a.Text != "" {
		s.Lines = strings.Count(a.Text, "\n")
		if !strings.HasSuffix(a.Text, "\n") {
			s.Lines++
		}
	}
	counts := map[string]int{}
	letters := 0
	inSentence := false
	var word strings.Builder
	flush := func() {
		if word.Len() == 0 {
			return
		}
		w := strings.Trim(word.String(), "'’")
		word.Reset()
		if w == "" {
			return
		}
		s.Words++
		letters += utf8.RuneCountInString(w)
		counts[strings.ToLower(w)]++
	}
	for _, r := range a.Text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || ((r == '\'' || r == '’' || r == '-') && word.Len() > 0):
			word.WriteRune(r)
			inSentence = true
		default:
			flush()
			if (r == '.' || r == '!' || r == '?') && inSentence {
				s.Sentences++
				inSentence = false
			}
		}
	}
	flush()
	if inSentence {
		s.Sentences++
	}
	s.UniqueWords = len(counts)
	if s.Words > 0 {
		s.AverageWordLength = float64(int(float64(letters)/float64(s.Words)*100+0.5)) / 100
	}
	for w, c := range counts {
		if a.IgnoreStopwords && stopwords[w] {
			continue
		}
		s.TopWords = append(s.TopWords, WordCount{w, c})
	}
	sort.Slice(s.TopWords, func(i, j int) bool {
		if s.TopWords[i].Count != s.TopWords[j].Count {
			return s.TopWords[i].Count > s.TopWords[j].Count
		}
		return s.TopWords[i].Word < s.TopWords[j].Word
	})
	if len(s.TopWords) > top {
		s.TopWords = s.TopWords[:top]
	}
	return s, nil
}
