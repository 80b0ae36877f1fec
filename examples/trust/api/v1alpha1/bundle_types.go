package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys the operator sets on every target it writes.
const (
	// LabelBundle labels a target ConfigMap or Secret with the name of the
	// Bundle that writes it.
	LabelBundle = "trust.cert-manager.io/bundle"
	// AnnotationHash is the annotation of a target that holds a hash of
	// what the Bundle wrote into it: its data and its template's labels
	// and annotations.
	AnnotationHash = "trust.cert-manager.io/hash"
)

// Condition types of a Bundle.
const (
	// ConditionSynced reports whether every target of the Bundle holds the
	// bundle its sources make. bosun's Ready summarises it.
	ConditionSynced = "Synced"
)

// Defaults of the additional formats' passwords.
const (
	// DefaultJKSPassword protects a JKS keystore whose Bundle names no
	// password: the one Java's own truststore uses.
	DefaultJKSPassword = "changeit"
	// DefaultPKCS12Password protects a PKCS#12 store whose Bundle names no
	// password: none.
	DefaultPKCS12Password = ""
)

// Bundle joins CA certificates from its sources into one PEM bundle and
// writes it into a ConfigMap or Secret (or both) in each namespace its
// target selects.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ConfigMap Target",type="string",JSONPath=".spec.target.configMap.key",description="The key of the target ConfigMaps"
// +kubebuilder:printcolumn:name="Secret Target",type="string",JSONPath=".spec.target.secret.key",description="The key of the target Secrets"
// +kubebuilder:printcolumn:name="Synced",type="string",JSONPath=".status.conditions[?(@.type == \"Synced\")].status",description="Whether every target holds the bundle"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type == \"Synced\")].reason",description="Why the Bundle is, or is not, synced"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="When the Bundle was created"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.target) || !has(self.spec.target.configMap) || !self.spec.sources.exists(s, has(s.configMap) && has(s.configMap.name) && s.configMap.name == self.metadata.name && has(s.configMap.key) && s.configMap.key == self.spec.target.configMap.key)",message="a source cannot be the Bundle's own target ConfigMap key",fieldPath=".spec.sources"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.target) || !has(self.spec.target.secret) || !self.spec.sources.exists(s, has(s.secret) && has(s.secret.name) && s.secret.name == self.metadata.name && has(s.secret.key) && s.secret.key == self.spec.target.secret.key)",message="a source cannot be the Bundle's own target Secret key",fieldPath=".spec.sources"
type Bundle struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata"`

	// Spec says where the Bundle's certificates come from and where they
	// go.
	// +required
	Spec BundleSpec `json:"spec"`

	// Status reports whether the targets hold the bundle.
	// +optional
	Status BundleStatus `json:"status,omitzero"`
}

// BundleList is a list of Bundles.
//
// +kubebuilder:object:root=true
type BundleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	// Items are the Bundles.
	Items []Bundle `json:"items"`
}

// BundleSpec is what a Bundle asks for.
//
// +kubebuilder:validation:XValidation:rule="self.sources.exists(s, has(s.configMap) || has(s.secret) || has(s.inLine) || (has(s.useDefaultCAs) && s.useDefaultCAs))",message="at least one source must give certificates: useDefaultCAs false gives none",fieldPath=".sources"
// +kubebuilder:validation:XValidation:rule="self.sources.filter(s, has(s.useDefaultCAs)).size() <= 1",message="useDefaultCAs may be set in one source at most",fieldPath=".sources"
type BundleSpec struct {
	// Sources are where the certificates come from. Their certificates
	// are joined, without duplicates, in a stable order.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Sources []BundleSource `json:"sources"`

	// Target is where the bundle goes.
	// +optional
	Target BundleTarget `json:"target,omitzero"`
}

// BundleSource is one source of certificates: exactly one of its fields.
//
// +structType=atomic
// +kubebuilder:validation:ExactlyOneOf=configMap;secret;inLine;useDefaultCAs
type BundleSource struct {
	// ConfigMap takes certificates from ConfigMaps of the trust
	// namespace.
	// +optional
	ConfigMap *SourceObjectKeySelector `json:"configMap,omitempty"`

	// Secret takes certificates from Secrets of the trust namespace.
	// +optional
	Secret *SourceObjectKeySelector `json:"secret,omitempty"`

	// InLine holds PEM certificates in the Bundle itself.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1048576
	InLine string `json:"inLine,omitempty"`

	// UseDefaultCAs, true, takes the certificates of the default CA
	// package the operator was given (its --default-package-location),
	// and reports the package's version in status.defaultCAVersion.
	// +optional
	UseDefaultCAs *bool `json:"useDefaultCAs,omitempty"`
}

// SourceObjectKeySelector selects ConfigMaps or Secrets of the trust
// namespace, by name or by labels, and the keys that hold certificates in
// them: one key, or all of them.
//
// +structType=atomic
// +kubebuilder:validation:ExactlyOneOf=name;selector
// +kubebuilder:validation:XValidation:rule="has(self.key) != (has(self.includeAllKeys) && self.includeAllKeys)",message="exactly one of key and includeAllKeys: true must be set",fieldPath=".key"
type SourceObjectKeySelector struct {
	// Name is the name of the object.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// Selector selects the objects by their labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Key is the key of the objects' data that holds certificates.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`

	// IncludeAllKeys, true, takes certificates from every key of the
	// objects' data.
	// +optional
	IncludeAllKeys *bool `json:"includeAllKeys,omitempty"`
}

// BundleTarget says where the bundle is written: a key of a ConfigMap, of
// a Secret, or both, named after the Bundle, in each namespace the
// selector selects.
//
// +kubebuilder:validation:AtLeastOneOf=configMap;secret
// +kubebuilder:validation:XValidation:rule="!has(self.additionalFormats) || !has(self.additionalFormats.jks) || ((!has(self.configMap) || self.configMap.key != self.additionalFormats.jks.key) && (!has(self.secret) || self.secret.key != self.additionalFormats.jks.key))",message="the JKS key must differ from the ConfigMap's and the Secret's keys",fieldPath=".additionalFormats.jks.key"
// +kubebuilder:validation:XValidation:rule="!has(self.additionalFormats) || !has(self.additionalFormats.pkcs12) || ((!has(self.configMap) || self.configMap.key != self.additionalFormats.pkcs12.key) && (!has(self.secret) || self.secret.key != self.additionalFormats.pkcs12.key) && (!has(self.additionalFormats.jks) || self.additionalFormats.jks.key != self.additionalFormats.pkcs12.key))",message="the PKCS#12 key must differ from the other target keys",fieldPath=".additionalFormats.pkcs12.key"
type BundleTarget struct {
	// ConfigMap writes the bundle into a ConfigMap.
	// +optional
	ConfigMap *TargetTemplate `json:"configMap,omitempty"`

	// Secret writes the bundle into a Secret (if the operator runs with
	// --secret-targets-enabled).
	// +optional
	Secret *TargetTemplate `json:"secret,omitempty"`

	// AdditionalFormats writes the bundle in other encodings too, under
	// keys of their own.
	// +optional
	AdditionalFormats *AdditionalFormats `json:"additionalFormats,omitempty"`

	// NamespaceSelector selects the namespaces of the targets by their
	// labels; unset, every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// AdditionalFormats are encodings of the bundle beside PEM: JKS,
// PKCS#12, or both.
//
// +kubebuilder:validation:AtLeastOneOf=jks;pkcs12
type AdditionalFormats struct {
	// JKS writes the bundle as a Java keystore of trusted certificates.
	// +optional
	JKS *JKS `json:"jks,omitempty"`

	// PKCS12 writes the bundle as a PKCS#12 trust store.
	// +optional
	PKCS12 *PKCS12 `json:"pkcs12,omitempty"`
}

// JKS is the Java keystore encoding of the bundle.
//
// +structType=atomic
// +kubebuilder:validation:MinProperties=1
type JKS struct {
	KeySelector `json:",inline"`

	// Password protects the keystore's integrity.
	// +optional
	// +kubebuilder:default=changeit
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Password string `json:"password,omitempty"`
}

// PKCS12 is the PKCS#12 encoding of the bundle.
//
// +structType=atomic
// +kubebuilder:validation:MinProperties=1
type PKCS12 struct {
	KeySelector `json:",inline"`

	// Password protects the store; empty, none.
	// +optional
	// +kubebuilder:default=""
	// +kubebuilder:validation:MinLength=0
	// +kubebuilder:validation:MaxLength=128
	Password *string `json:"password,omitempty"`

	// Profile is the set of algorithms the store is encoded with;
	// LegacyRC2 when unset.
	// +optional
	Profile PKCS12Profile `json:"profile,omitempty"`
}

// PKCS12Profile names a set of algorithms of a PKCS#12 store.
//
// +kubebuilder:validation:Enum=LegacyRC2;LegacyDES;Modern2023
type PKCS12Profile string

// The PKCS#12 profiles.
const (
	// LegacyRC2PKCS12Profile encrypts with RC2, which older Java reads.
	LegacyRC2PKCS12Profile PKCS12Profile = "LegacyRC2"
	// LegacyDESPKCS12Profile encrypts with triple DES, which Windows
	// before 2019 reads.
	LegacyDESPKCS12Profile PKCS12Profile = "LegacyDES"
	// Modern2023PKCS12Profile encrypts with AES-256 and PBKDF2.
	Modern2023PKCS12Profile PKCS12Profile = "Modern2023"
)

// KeySelector names the key of the target's data an encoding is written
// to.
type KeySelector struct {
	// Key is the key of the target's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// TargetTemplate is the key of a target's data the bundle is written to,
// and the labels and annotations the target carries.
type TargetTemplate struct {
	// Key is the key of the target's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`

	// Metadata holds labels and annotations for the targets.
	// +optional
	Metadata TargetMetadata `json:"metadata,omitzero"`
}

// TargetMetadata are labels and annotations a target carries, besides the
// operator's own.
//
// +kubebuilder:validation:MinProperties=1
type TargetMetadata struct {
	// Annotations of the targets. Keys under trust.cert-manager.io/ and
	// trust-manager.io/ are the operator's.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('trust.cert-manager.io/') && !k.startsWith('trust-manager.io/'))",message="annotations under trust.cert-manager.io/ and trust-manager.io/ are the operator's"
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels of the targets. Keys under trust.cert-manager.io/ and
	// trust-manager.io/ are the operator's.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('trust.cert-manager.io/') && !k.startsWith('trust-manager.io/'))",message="labels under trust.cert-manager.io/ and trust-manager.io/ are the operator's"
	Labels map[string]string `json:"labels,omitempty"`
}

// BundleStatus is what the operator reports of a Bundle.
//
// +kubebuilder:validation:MinProperties=1
type BundleStatus struct {
	// Conditions are Synced, and bosun's Ready beside it.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MinItems=0
	// +kubebuilder:validation:MaxItems=10
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DefaultCAPackageVersion is the version of the default CA package
	// in the bundle, when a source asks for it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DefaultCAPackageVersion string `json:"defaultCAVersion,omitempty"`
}

// GetConditions returns the Bundle's status conditions, for bosun's
// engine.
func (b *Bundle) GetConditions() []metav1.Condition { return b.Status.Conditions }

// SetConditions replaces the Bundle's status conditions, for bosun's
// engine.
func (b *Bundle) SetConditions(c []metav1.Condition) { b.Status.Conditions = c }
