package protocol

// FilesSearchParams are the params of files.search.
type FilesSearchParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	// Query is matched fuzzily against the project's paths
	// (case-insensitive, Latin diacritics folded), at most 256 characters.
	// Empty: the shallowest paths, in byte order.
	Query string `json:"query"`
	// Limit is the most results returned: 1 to 200; absent or 0: 50.
	Limit int `json:"limit,omitempty" jsonschema:"minimum=0,maximum=200"`
}

// FilesSearchResult is the result of files.search.
type FilesSearchResult struct {
	// Results are the best matches, best first.
	Results []FileMatch `json:"results"`
	// Truncated: the project has more paths than the index holds
	// (200,000); the deeper ones are never found.
	Truncated bool `json:"truncated"`
}

// FileMatch is one path files.search found.
type FileMatch struct {
	// Path is relative to the project folder, slash-separated; a
	// directory's ends in "/".
	Path string `json:"path"`
	// Score ranks the match (higher is better); only the order means
	// anything. 0 for an empty query.
	Score int `json:"score"`
	// Positions are the UTF-16 code unit offsets in path of the matched
	// characters, ascending (JavaScript string indices); empty for an
	// empty query.
	Positions []int `json:"positions"`
}
