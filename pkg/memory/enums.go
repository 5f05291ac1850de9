package memory

import (
	"fmt"
	"slices"
	"strings"
)

// Every enumeration is a small integer on disk and a lowercase snake_case
// string on the wire. The zero value of each is "unset" and is never valid in
// a stored record, so a forgotten field is caught by validation instead of
// silently meaning the first value.

// enumNames holds the wire spellings of one enumeration, indexed by value;
// index 0 is the unset value and has no spelling.
type enumNames struct {
	kind  string // what the value is, for error messages: "store", "speaker"
	names []string
}

func (e enumNames) name(v uint8) string {
	if int(v) < len(e.names) && v != 0 {
		return e.names[v]
	}
	return ""
}

func (e enumNames) parse(s string) (uint8, error) {
	for i := 1; i < len(e.names); i++ {
		if e.names[i] == s {
			return uint8(i), nil
		}
	}
	return 0, &Error{Code: CodeValidation, Message: fmt.Sprintf("invalid %s %s: want one of %s", e.kind, Quote(s), e.list())}
}

func (e enumNames) list() string { return strings.Join(e.names[1:], ", ") }

// Enum is any of the package's enumerations.
type Enum interface {
	StoreType | Modality | AssociationType | RecallMode | RawSource | RawSpeaker | Visibility |
		SecrecyLevel | MetaCaptureStatus | MetaRelation | TimeGranularity | ConsolidationStrategy |
		ImportStrategy | ConflictResolution | AssociationOrigin
}

// Names returns the wire names of the enumeration E in value order, a new
// slice on every call. Schemas and help texts that list accepted values
// take them from here.
func Names[E Enum]() []string {
	var names enumNames
	switch any(*new(E)).(type) {
	case StoreType:
		names = storeNames
	case Modality:
		names = modalityNames
	case AssociationType:
		names = assocNames
	case AssociationOrigin:
		names = originNames
	case RecallMode:
		names = modeNames
	case RawSource:
		names = sourceNames
	case RawSpeaker:
		names = speakerNames
	case Visibility:
		names = visibilityNames
	case SecrecyLevel:
		names = secrecyNames
	case MetaCaptureStatus:
		names = captureNames
	case MetaRelation:
		names = relationNames
	case TimeGranularity:
		names = granularityNames
	case ConsolidationStrategy:
		names = strategyNames
	case ImportStrategy:
		names = importStrategyNames
	case ConflictResolution:
		names = conflictNames
	}
	return slices.Clone(names.names[1:])
}

func (e enumNames) marshal(v uint8) ([]byte, error) {
	n := e.name(v)
	if n == "" {
		return nil, fmt.Errorf("memory: %s value %d has no name", e.kind, v)
	}
	return []byte(n), nil
}

// StoreType names one of the curated stores.
type StoreType uint8

// The curated stores. Working is in memory only.
const (
	StoreEpisodic StoreType = iota + 1
	StoreSemantic
	StoreProcedural
	StoreEmotional
	StoreWorking
)

var storeNames = enumNames{"store", []string{"", "episodic", "semantic", "procedural", "emotional", "working"}}

// AllStores returns the five stores in the canonical order, in a new
// slice the caller may keep or change.
func AllStores() []StoreType {
	return []StoreType{StoreEpisodic, StoreSemantic, StoreProcedural, StoreEmotional, StoreWorking}
}

// PersistentStores returns the four stores kept on disk, in a new slice
// the caller may keep or change.
func PersistentStores() []StoreType {
	return []StoreType{StoreEpisodic, StoreSemantic, StoreProcedural, StoreEmotional}
}

func (s StoreType) String() string               { return storeNames.name(uint8(s)) }
func (s StoreType) Valid() bool                  { return s >= StoreEpisodic && s <= StoreWorking }
func (s StoreType) Persistent() bool             { return s >= StoreEpisodic && s <= StoreEmotional }
func (s StoreType) MarshalText() ([]byte, error) { return storeNames.marshal(uint8(s)) }
func (s *StoreType) UnmarshalText(b []byte) error {
	v, err := storeNames.parse(string(b))
	*s = StoreType(v)
	return err
}

// ParseStoreType parses an exact lowercase store name.
func ParseStoreType(s string) (StoreType, error) {
	v, err := storeNames.parse(s)
	return StoreType(v), err
}

// StoreTypeNames is the list of accepted store names, for help texts.
func StoreTypeNames() string { return storeNames.list() }

// Modality is the kind of a content block.
type Modality uint8

// Content modalities.
const (
	ModalityText Modality = iota + 1
	ModalityImage
	ModalityAudio
	ModalityVideo
	ModalityStructured
	ModalitySpatial
	ModalityTemporal
	ModalityInteroceptive
)

var modalityNames = enumNames{"modality", []string{"", "text", "image", "audio", "video", "structured", "spatial", "temporal", "interoceptive"}}

func (m Modality) String() string               { return modalityNames.name(uint8(m)) }
func (m Modality) Valid() bool                  { return m >= ModalityText && m <= ModalityInteroceptive }
func (m Modality) MarshalText() ([]byte, error) { return modalityNames.marshal(uint8(m)) }
func (m *Modality) UnmarshalText(b []byte) error {
	v, err := modalityNames.parse(string(b))
	*m = Modality(v)
	return err
}

// AssociationType is the kind of an edge between two records.
type AssociationType uint8

// Association types.
const (
	AssocTemporal AssociationType = iota + 1
	AssocSpatial
	AssocSemantic
	AssocEmotional
	AssocCausal
	AssocSequential
	AssocCrossModal
	AssocUserDefined
)

var assocNames = enumNames{"association type", []string{"", "temporal", "spatial", "semantic", "emotional", "causal", "sequential", "cross_modal", "user_defined"}}

func (a AssociationType) String() string               { return assocNames.name(uint8(a)) }
func (a AssociationType) Valid() bool                  { return a >= AssocTemporal && a <= AssocUserDefined }
func (a AssociationType) MarshalText() ([]byte, error) { return assocNames.marshal(uint8(a)) }
func (a *AssociationType) UnmarshalText(b []byte) error {
	v, err := assocNames.parse(string(b))
	*a = AssociationType(v)
	return err
}

// ParseAssociationType parses an exact association type name.
func ParseAssociationType(s string) (AssociationType, error) {
	v, err := assocNames.parse(s)
	return AssociationType(v), err
}

// AssociationOrigin says who made an association. It is an addition to
// the upstream model: edges from older data or other implementations have
// none (the unset value), and it is left out of their JSON.
type AssociationOrigin uint8

// Association origins.
const (
	// OriginClient: given by a client when storing (the associations of a
	// store request, the sequential links a batch asks to infer).
	OriginClient AssociationOrigin = iota + 1
	// OriginDerivation: provenance between a record and one memsvc derived
	// from it (dream summary and semantic node, consolidated copy and
	// source).
	OriginDerivation
	// OriginSimilarity: inferred by memsvc on its own because the records
	// are alike.
	OriginSimilarity
)

var originNames = enumNames{"association origin", []string{"", "client", "derivation", "similarity"}}

func (o AssociationOrigin) String() string { return originNames.name(uint8(o)) }
func (o AssociationOrigin) Valid() bool    { return o >= OriginClient && o <= OriginSimilarity }
func (o AssociationOrigin) MarshalText() ([]byte, error) {
	return originNames.marshal(uint8(o))
}
func (o *AssociationOrigin) UnmarshalText(b []byte) error {
	v, err := originNames.parse(string(b))
	*o = AssociationOrigin(v)
	return err
}

// RecallMode selects how recall renders and ranks records.
type RecallMode uint8

// Recall modes.
const (
	ModeHuman RecallMode = iota + 1
	ModePerfect
)

var modeNames = enumNames{"recall mode", []string{"", "human", "perfect"}}

func (m RecallMode) String() string               { return modeNames.name(uint8(m)) }
func (m RecallMode) Valid() bool                  { return m == ModeHuman || m == ModePerfect }
func (m RecallMode) MarshalText() ([]byte, error) { return modeNames.marshal(uint8(m)) }
func (m *RecallMode) UnmarshalText(b []byte) error {
	v, err := modeNames.parse(string(b))
	*m = RecallMode(v)
	return err
}

// ParseRecallMode parses "human" or "perfect".
func ParseRecallMode(s string) (RecallMode, error) {
	v, err := modeNames.parse(s)
	return RecallMode(v), err
}

// RawSource says where a raw journal entry came from.
type RawSource uint8

// Raw sources.
const (
	SourceConversation RawSource = iota + 1
	SourceToolIO
	SourceScratchpad
	SourceSummary
	SourceImported
)

var sourceNames = enumNames{"source", []string{"", "conversation", "tool_io", "scratchpad", "summary", "imported"}}

func (s RawSource) String() string               { return sourceNames.name(uint8(s)) }
func (s RawSource) Valid() bool                  { return s >= SourceConversation && s <= SourceImported }
func (s RawSource) MarshalText() ([]byte, error) { return sourceNames.marshal(uint8(s)) }
func (s *RawSource) UnmarshalText(b []byte) error {
	v, err := sourceNames.parse(string(b))
	*s = RawSource(v)
	return err
}

// ParseRawSource parses a raw source name.
func ParseRawSource(s string) (RawSource, error) {
	v, err := sourceNames.parse(s)
	return RawSource(v), err
}

// RawSpeaker says who produced a raw journal entry.
type RawSpeaker uint8

// Raw speakers.
const (
	SpeakerUser RawSpeaker = iota + 1
	SpeakerAssistant
	SpeakerSystem
	SpeakerTool
)

var speakerNames = enumNames{"speaker", []string{"", "user", "assistant", "system", "tool"}}

func (s RawSpeaker) String() string               { return speakerNames.name(uint8(s)) }
func (s RawSpeaker) Valid() bool                  { return s >= SpeakerUser && s <= SpeakerTool }
func (s RawSpeaker) MarshalText() ([]byte, error) { return speakerNames.marshal(uint8(s)) }
func (s *RawSpeaker) UnmarshalText(b []byte) error {
	v, err := speakerNames.parse(string(b))
	*s = RawSpeaker(v)
	return err
}

// ParseRawSpeaker parses a speaker name.
func ParseRawSpeaker(s string) (RawSpeaker, error) {
	v, err := speakerNames.parse(s)
	return RawSpeaker(v), err
}

// Visibility controls whether raw entries show up in recall and dreams.
type Visibility uint8

// Visibilities.
const (
	VisibilityNormal Visibility = iota + 1
	VisibilityPrivateScratch
	VisibilitySealed
)

var visibilityNames = enumNames{"visibility", []string{"", "normal", "private_scratch", "sealed"}}

func (v Visibility) String() string               { return visibilityNames.name(uint8(v)) }
func (v Visibility) Valid() bool                  { return v >= VisibilityNormal && v <= VisibilitySealed }
func (v Visibility) MarshalText() ([]byte, error) { return visibilityNames.marshal(uint8(v)) }
func (v *Visibility) UnmarshalText(b []byte) error {
	x, err := visibilityNames.parse(string(b))
	*v = Visibility(x)
	return err
}

// ParseVisibility parses a visibility name.
func ParseVisibility(s string) (Visibility, error) {
	v, err := visibilityNames.parse(s)
	return Visibility(v), err
}

// SecrecyLevel classifies how sensitive a raw entry is.
type SecrecyLevel uint8

// Secrecy levels.
const (
	SecrecyPublic SecrecyLevel = iota + 1
	SecrecySensitive
	SecrecySecret
)

var secrecyNames = enumNames{"secrecy level", []string{"", "public", "sensitive", "secret"}}

func (s SecrecyLevel) String() string               { return secrecyNames.name(uint8(s)) }
func (s SecrecyLevel) Valid() bool                  { return s >= SecrecyPublic && s <= SecrecySecret }
func (s SecrecyLevel) MarshalText() ([]byte, error) { return secrecyNames.marshal(uint8(s)) }
func (s *SecrecyLevel) UnmarshalText(b []byte) error {
	v, err := secrecyNames.parse(string(b))
	*s = SecrecyLevel(v)
	return err
}

// ParseSecrecyLevel parses a secrecy level name.
func ParseSecrecyLevel(s string) (SecrecyLevel, error) {
	v, err := secrecyNames.parse(s)
	return SecrecyLevel(v), err
}

// MetaCaptureStatus says how a record's meta-memory came to be.
type MetaCaptureStatus uint8

// Meta capture statuses. Legacy is what a missing status decodes to.
const (
	CaptureProvided MetaCaptureStatus = iota + 1
	CaptureInferred
	CaptureLegacy
	CaptureUnavailable
)

var captureNames = enumNames{"capture status", []string{"", "provided", "inferred", "legacy", "unavailable"}}

func (c MetaCaptureStatus) String() string               { return captureNames.name(uint8(c)) }
func (c MetaCaptureStatus) Valid() bool                  { return c >= CaptureProvided && c <= CaptureUnavailable }
func (c MetaCaptureStatus) MarshalText() ([]byte, error) { return captureNames.marshal(uint8(c)) }
func (c *MetaCaptureStatus) UnmarshalText(b []byte) error {
	v, err := captureNames.parse(string(b))
	*c = MetaCaptureStatus(v)
	return err
}

// MetaRelation is the kind of a meta-memory context edge.
type MetaRelation uint8

// Meta relations. ContextOf is what a missing relation decodes to.
const (
	RelMotivatedBy MetaRelation = iota + 1
	RelCausedBy
	RelDerivedFrom
	RelSupports
	RelContradicts
	RelChoseOver
	RelExplains
	RelContextOf
)

var relationNames = enumNames{"meta relation", []string{"", "motivated_by", "caused_by", "derived_from", "supports", "contradicts", "chose_over", "explains", "context_of"}}

func (r MetaRelation) String() string               { return relationNames.name(uint8(r)) }
func (r MetaRelation) Valid() bool                  { return r >= RelMotivatedBy && r <= RelContextOf }
func (r MetaRelation) MarshalText() ([]byte, error) { return relationNames.marshal(uint8(r)) }
func (r *MetaRelation) UnmarshalText(b []byte) error {
	v, err := relationNames.parse(string(b))
	*r = MetaRelation(v)
	return err
}

// TimeGranularity is the bucket size of a timeline.
type TimeGranularity uint8

// Timeline granularities.
const (
	GranularityMinute TimeGranularity = iota + 1
	GranularityHour
	GranularityDay
	GranularityWeek
	GranularityMonth
)

var granularityNames = enumNames{"granularity", []string{"", "minute", "hour", "day", "week", "month"}}

func (g TimeGranularity) String() string               { return granularityNames.name(uint8(g)) }
func (g TimeGranularity) Valid() bool                  { return g >= GranularityMinute && g <= GranularityMonth }
func (g TimeGranularity) MarshalText() ([]byte, error) { return granularityNames.marshal(uint8(g)) }
func (g *TimeGranularity) UnmarshalText(b []byte) error {
	v, err := granularityNames.parse(string(b))
	*g = TimeGranularity(v)
	return err
}

// ParseTimeGranularity parses a granularity name.
func ParseTimeGranularity(s string) (TimeGranularity, error) {
	v, err := granularityNames.parse(s)
	return TimeGranularity(v), err
}

// ConsolidationStrategy selects what consolidation does.
type ConsolidationStrategy uint8

// Consolidation strategies.
const (
	ConsolidateFull ConsolidationStrategy = iota + 1
	ConsolidateIncremental
	ConsolidateSelective
)

var strategyNames = enumNames{"consolidation strategy", []string{"", "full", "incremental", "selective"}}

func (c ConsolidationStrategy) String() string               { return strategyNames.name(uint8(c)) }
func (c ConsolidationStrategy) Valid() bool                  { return c >= ConsolidateFull && c <= ConsolidateSelective }
func (c ConsolidationStrategy) MarshalText() ([]byte, error) { return strategyNames.marshal(uint8(c)) }
func (c *ConsolidationStrategy) UnmarshalText(b []byte) error {
	v, err := strategyNames.parse(string(b))
	*c = ConsolidationStrategy(v)
	return err
}

// ParseConsolidationStrategy parses a strategy name.
func ParseConsolidationStrategy(s string) (ConsolidationStrategy, error) {
	v, err := strategyNames.parse(s)
	return ConsolidationStrategy(v), err
}

// ImportStrategy selects whether an import merges into or replaces the data.
type ImportStrategy uint8

// Import strategies.
const (
	ImportMerge ImportStrategy = iota + 1
	ImportReplace
)

var importStrategyNames = enumNames{"import strategy", []string{"", "merge", "replace"}}

func (s ImportStrategy) String() string               { return importStrategyNames.name(uint8(s)) }
func (s ImportStrategy) Valid() bool                  { return s == ImportMerge || s == ImportReplace }
func (s ImportStrategy) MarshalText() ([]byte, error) { return importStrategyNames.marshal(uint8(s)) }
func (s *ImportStrategy) UnmarshalText(b []byte) error {
	v, err := importStrategyNames.parse(string(b))
	*s = ImportStrategy(v)
	return err
}

// ParseImportStrategy parses an import strategy name.
func ParseImportStrategy(s string) (ImportStrategy, error) {
	v, err := importStrategyNames.parse(s)
	return ImportStrategy(v), err
}

// ConflictResolution decides which copy wins when an import meets an
// existing id.
type ConflictResolution uint8

// Conflict resolutions.
const (
	KeepExisting ConflictResolution = iota + 1
	KeepImported
	KeepNewer
)

var conflictNames = enumNames{"conflict resolution", []string{"", "keep_existing", "keep_imported", "keep_newer"}}

func (c ConflictResolution) String() string               { return conflictNames.name(uint8(c)) }
func (c ConflictResolution) Valid() bool                  { return c >= KeepExisting && c <= KeepNewer }
func (c ConflictResolution) MarshalText() ([]byte, error) { return conflictNames.marshal(uint8(c)) }
func (c *ConflictResolution) UnmarshalText(b []byte) error {
	v, err := conflictNames.parse(string(b))
	*c = ConflictResolution(v)
	return err
}

// ParseConflictResolution parses a conflict resolution name.
func ParseConflictResolution(s string) (ConflictResolution, error) {
	v, err := conflictNames.parse(s)
	return ConflictResolution(v), err
}
