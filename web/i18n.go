package web

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// The lab's UI strings live in static/i18n/<lang>.json (see
// static/js/i18n.js). The pages are rendered in English from en.json, so
// that the English text exists once; the page's script switches to the
// learner's language. The languages offered are the files embedded, so
// adding a language is adding its file.

// Language is one language the lab offers: its tag and its own name.
type Language struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

var (
	i18nOnce  sync.Once
	english   map[string]string
	languages []Language
)

func loadI18n() {
	i18nOnce.Do(func() {
		english = readStrings("en")
		entries, _ := fs.ReadDir(Static(), "i18n")
		for _, e := range entries {
			code, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok || e.IsDir() {
				continue
			}
			name := readStrings(code)["_name"]
			if name == "" {
				name = code
			}
			languages = append(languages, Language{Code: code, Name: name})
		}
		sort.Slice(languages, func(i, j int) bool { return languages[i].Code < languages[j].Code })
	})
}

func readStrings(code string) map[string]string {
	b, err := fs.ReadFile(Static(), path.Join("i18n", code+".json"))
	if err != nil {
		return map[string]string{}
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		panic("web: static/i18n/" + code + ".json: " + err.Error())
	}
	return m
}

// t is a UI string in English; a key without a text renders as the key, so
// a missing string is visible (and TestEveryPageStringHasAnEnglishText fails).
func t(key string) string {
	loadI18n()
	if s, ok := english[key]; ok {
		return s
	}
	return key
}

// Languages lists the languages whose UI strings are embedded.
func Languages() []Language {
	loadI18n()
	return languages
}
