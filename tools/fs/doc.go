// Package fs owns the file tools: read_file, list_files, write_file and
// replace_in_file. Every path goes through package confine: the tool resolves
// the path against the session's Workspace, then does each read, create,
// rename or remove through the *os.Root that Workspace.Open returns, so that
// neither "..", an absolute path, nor a symlink (even one swapped in after the
// check) reaches outside the workspace and its granted directories. Writes
// are atomic (a temp file in the same directory, then a rename) and respect
// the session's conflict.Guard. Files are opened with confine.OpenRead:
// never blocking, and FIFOs, sockets and devices refused (special_file).
//
// Concurrency: the handlers keep no state of their own; they are safe to call
// concurrently. Two writes racing on one file end with one of them, whole.
package fs
