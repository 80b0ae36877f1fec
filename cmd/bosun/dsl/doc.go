// Package dsl reads bosun documents: the small language that declares,
// for a custom resource, the states a controller observes and the actions
// it runs on them. The bosun generator turns a checked document into Go.
//
// # The language
//
// A document binds API group/versions to Go packages, gives kinds short
// names, and declares managers:
//
//	bind batch/v1 k8s.io/api/batch/v1
//	bind cronjob.bosun.dev/v1 github.com/bosunkit/bosun/examples/cronjob/api/v1
//
//	alias CronJob cronjob.bosun.dev/v1/CronJob
//
//	// CronJobManager runs the CronJob controller.
//	decl CronJobManager for CronJob {
//		state {
//			jobs []Job {
//				labels/cronjob=${target.Name}
//				owned
//			}
//		}
//
//		action {
//			CleanUpOldJobs(jobs)
//			RunNextJob()
//		}
//	}
//
// `bind GROUP/VERSION GO-PACKAGE` names the Go package that holds the types
// of a group/version; the core group is written as just its version (`v1`).
// `alias NAME GROUP/VERSION/KIND` gives a kind a name (`VERSION/KIND` for
// the core group); `alias NAME GROUP/VERSION/KIND cluster` says the kind is
// cluster-scoped. Some kinds are built in and need neither; an alias of
// the same name overrides a built-in kind, and a bind of a built-in
// group/version moves its kinds to the bound package (Kind.Builtin tells a
// built-in kind in a Spec):
//
//	v1                            Pod Service ConfigMap Secret ServiceAccount
//	                              PersistentVolumeClaim Endpoints Event
//	                              LimitRange ResourceQuota
//	                              ReplicationController PodTemplate;
//	                              cluster-scoped: Namespace Node PersistentVolume
//	apps/v1                       Deployment StatefulSet DaemonSet ReplicaSet
//	                              ControllerRevision
//	batch/v1                      Job CronJob
//	networking.k8s.io/v1          Ingress NetworkPolicy; cluster-scoped: IngressClass
//	rbac.authorization.k8s.io/v1  Role RoleBinding;
//	                              cluster-scoped: ClusterRole ClusterRoleBinding
//	coordination.k8s.io/v1        Lease
//	storage.k8s.io/v1             cluster-scoped: StorageClass
//
// `decl NAME for KIND { ... }` declares a manager for the target kind KIND
// with state and action blocks. A state `name Kind { ... }` is one object,
// `name []Kind { ... }` a list, read from the target's namespace unless
// its kind is cluster-scoped or it names a namespace. Its body has one
// selector a line:
//
//	name=VALUE             the name of a single object (required there)
//	namespace=VALUE        read in that namespace, not the target's
//	labels/KEY=VALUE       a label a listed object must carry
//	labels/KEY!=VALUE      a label it must not carry with that value
//	labels/KEY in (A, B)   a label it must carry with one of the values
//	labels/KEY notin (A)   a label it must not carry with any of them
//	labels/KEY             a label it must carry
//	!labels/KEY            a label it must not carry
//	fields/PATH=VALUE      a field (".spec.nodeName") a listed object must have;
//	                       ".metadata.controller" is the name of the object's
//	                       controller of the target's kind
//	owned                  keep only objects the target controls
//
// Label selectors mean what they mean in Kubernetes: `!=` and `notin` also
// select objects without the label. For a cluster-scoped target a
// namespaced list state without a namespace reads every namespace, and a
// namespaced single-object state needs one. Owner references never cross
// namespaces, so a namespaced target's owned states (and its
// .metadata.controller selectors) must be read in its own namespace; Check
// reports the combinations that cannot hold.
//
// A VALUE runs to the next blank, or is quoted with Go escapes
// ("a b\n"). `${target.Field.Path}` inside a value is replaced by a string
// field of the target, named by its Go field names. An action
// `Name(state, ...)` names the states it reads, all of its own decl; it may
// name none. After them, `writes Kind(verb, ...), ...` says which kinds the
// action writes with which API verbs (create, update, patch, delete,
// deletecollection), for the generated RBAC markers:
//
//	RunNextJob() writes Job(create, delete)
//
// Comments start with `//` and run to the end of the line.
//
// # Grammar
//
// Statements, headers up to their `{`, and actions each sit on one line;
// inside a state body every line is one selector.
//
//	Document  = { Bind | Alias | Decl } .
//	Bind      = "bind" GroupVersion GoPackage .
//	Alias     = "alias" Name GVK [ "cluster" ] .
//	Decl      = "decl" Name [ "for" Name ] "{" { Block } "}" .
//	Block     = ( "state" "{" { State } "}" ) | ( "action" "{" { Action } "}" ) .
//	State     = Name [ "[]" ] Name "{" { Selector newline } "}" .
//	Selector  = "name" "=" Value | "namespace" "=" Value
//	          | "labels/" Key ( "=" | "!=" ) Value
//	          | "labels/" Key ( "in" | "notin" ) "(" Value { "," Value } ")"
//	          | "labels/" Key | "!labels/" Key
//	          | "fields/" Path "=" Value | "owned" .
//	Action    = Name "(" [ Name { "," Name } [ "," ] ] ")"
//	            [ "writes" Write { "," Write } ] .
//	Write     = Name "(" Verb { "," Verb } ")" .
//	Value     = Quoted | Unquoted .
//	Quoted    = `"` { char | escape | Ref } `"` .
//	Unquoted  = { char | Ref } .      // up to a blank, line end or "}"
//	                                  // (in a value list also "," or ")")
//	Ref       = "${" "target" "." Field { "." Field } "}" .
//
// A Name, GroupVersion, GoPackage or GVK is a word: a run of characters
// other than blanks and { } ( ) [ ] , " (and not containing //). Check
// requires names to be Go identifiers.
//
// # Using the package
//
// Parse turns text into a *File, reporting every syntax error it finds; Check
// resolves kinds and validates names, selectors and references into a
// *Spec, again reporting everything. Both return an ErrorList, sorted by
// position, whose messages read "FILE:LINE:COL: message"; PrintErrors
// prints them with the source line and a caret. Format prints a *File in
// canonical form, keeping its comments.
//
// A *File is opaque: the syntax tree is the package's own. A generator reads
// the *Spec: a DeclSpec per decl with its StateSpecs and ActionSpecs, each
// with the position of its name, the resolved Kinds, the selectors as
// Requirements and in canonical text, and the document's Comments.
//
// Maturity: experimental. The language still grows with the generator, and
// the Spec gains fields as it does.
package dsl
