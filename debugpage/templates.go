package debugpage

import "html/template"

const layout = `{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}} · bosun</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1b1b1b}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccd;padding:.25rem .5rem;text-align:left;font-size:.9rem;vertical-align:top}
th{background:#f2f4f8}.error{color:#a00}.muted{color:#667}code{font-size:.85rem}
section.pass{border-left:4px solid #2f6fb3;padding-left:.75rem;margin:1rem 0}
section.pass.failed{border-color:#a00}
</style></head><body>{{end}}`

var indexTemplate = template.Must(template.New("index").Parse(layout + `{{template "head" "reconcilers"}}
<h1>bosun reconcilers</h1>
{{range .Reconcilers}}
<section class="reconciler" id="r-{{.Name}}">
<h2><a href="controller?name={{.Name}}">{{.Name}}</a> <span class="muted">{{if .GVK.Kind}}{{.GVK.GroupKind}} {{.GVK.Version}}{{end}}</span></h2>
<p>{{.Objects}} objects kept, {{.Passes}} passes seen.</p>
{{.Graph}}
</section>
{{else}}<p>No reconciler is set up yet.</p>{{end}}
</body></html>`))

var controllerTemplate = template.Must(template.New("controller").Parse(layout + `{{template "head" .Name}}
<p><a href="./">all reconcilers</a></p>
<h1>{{.Name}}</h1>
<table class="objects"><tr><th>object</th><th>last pass</th><th>trigger</th><th>result</th><th>Ready</th><th>reason</th><th>passes kept</th><th>error</th></tr>
{{range .Objects}}<tr><td><a href="{{.Link}}">{{.Object}}</a></td><td>{{.Ago}}</td><td>{{.Trigger}}</td><td>{{.Result}}</td><td>{{.Ready}}</td><td>{{.Reason}}</td><td>{{.Passes}}</td><td class="error">{{.Error}}</td></tr>
{{else}}<tr><td colspan="8">No pass yet.</td></tr>{{end}}
</table>
</body></html>`))

var objectTemplate = template.Must(template.New("object").Parse(layout + `{{template "head" .Object}}
<p><a href="./">all reconcilers</a> · <a href="controller?name={{.Controller}}">{{.Controller}}</a></p>
<h1>{{.Object}} <span class="muted">({{.Controller}})</span></h1>
{{range .Passes}}
<section class="pass{{if .Error}} failed{{end}}">
<h2>{{.Ago}} · <span class="trigger">{{.Trigger}}</span></h2>
<p>started <code>{{.Start}}</code>, took {{.Duration}}, result <b class="result">{{.Result}}</b>{{if .TraceID}}, trace <code>{{.TraceID}}</code>{{end}}</p>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
<table class="steps"><tr><th>step</th><th>phase</th><th>took</th><th>result</th><th>error</th></tr>
{{range .Steps}}<tr><td class="step">{{.Name}}</td><td>{{.Phase}}</td><td>{{.Duration}}</td><td>{{.Result}}</td><td class="error">{{.Error}}</td></tr>{{end}}
</table>
{{if .Conditions}}<table class="conditions"><tr><th>condition</th><th>status</th><th>reason</th><th>message</th></tr>
{{range .Conditions}}<tr><td>{{.Type}}</td><td>{{.Status}}</td><td>{{.Reason}}</td><td>{{.Message}}</td></tr>{{end}}
</table>{{end}}
</section>
{{else}}<p>No pass of this object is kept.</p>{{end}}
</body></html>`))
