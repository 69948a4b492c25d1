package web

import (
	"regexp"
	"strings"
	"testing"
)

// Every text the landing page and the lab render comes from en.json: a
// key without an English text would render as the key itself.
func TestEveryPageStringHasAnEnglishText(t *testing.T) {
	loadI18n()
	for _, path := range []string{"/", "/lab", "/s/demo/"} {
		page := body(t, get(t, Handler(), path))
		for _, m := range regexp.MustCompile(`data-i18n="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if _, ok := english[m[1]]; !ok {
				t.Errorf("%s: data-i18n %q has no text in en.json", path, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`data-i18n-attr="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			for _, pair := range strings.Split(m[1], ";") {
				_, key, _ := strings.Cut(pair, "=")
				if _, ok := english[key]; !ok {
					t.Errorf("%s: data-i18n-attr %q has no text in en.json", path, key)
				}
			}
		}
	}
}

// The languages offered are the files embedded; each names itself.
func TestLanguagesAreTheEmbeddedFiles(t *testing.T) {
	want := map[string]string{"en": "English", "zh": "中文", "ko": "한국어"}
	got := map[string]string{}
	for _, l := range Languages() {
		got[l.Code] = l.Name
	}
	for code, name := range want {
		if got[code] != name {
			t.Errorf("language %s: name %q, want %q (all: %v)", code, got[code], name, got)
		}
	}
	page := body(t, get(t, Handler(), "/lab"))
	if !strings.Contains(page, `<option value="ko">한국어</option>`) {
		t.Error("the lab does not offer Korean")
	}
}
