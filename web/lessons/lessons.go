// Package lessons holds rvplay's lessons as data: one directory per lesson,
// <nn>-<slug>/, with its language-neutral definition (lesson.json) and its
// texts, one markdown file per step per language (en/01.md, zh/01.md, ...).
// README.md in this directory describes the format.
//
// Definitions embeds only the definitions, for the Go side (the lesson
// engine in engine/lesson, linked into the WebAssembly build and the
// server); Files embeds everything, for serving the texts as static files.
// A binary that never refers to Files does not carry the texts. The package
// imports nothing but embed and io/fs, so the browser build may link it.
package lessons

import (
	"embed"
	"io/fs"
)

//go:embed */lesson.json
var definitions embed.FS

//go:embed */lesson.json */*/*.md
var files embed.FS

// Definitions is every <nn>-<slug>/lesson.json, for lesson.Load.
func Definitions() fs.FS { return definitions }

// Files is every definition and text, for the browser: <nn>-<slug>/lesson.json
// and <nn>-<slug>/<lang>/<nn>.md.
func Files() fs.FS { return files }
