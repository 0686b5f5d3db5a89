/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfreader.h - the perfreader library: per-CPU sampling of user registers
 * and user stacks with perf_event_open(2), perf.data files, the processes
 * the records describe, their stacks unwound, named and counted in a
 * profile.  This header includes every other; each concept has its own:
 *
 *   prcommon.h   export marker, options structs, logging, error strings
 *   prrecord.h   the typed records (samples, mappings, tasks), registers
 *   prevent.h    events by name, as perf spells them
 *   prreader.h   live sampling: the event, targets, per-CPU rings, records
 *                synthesized for what already existed
 *   prcounter.h  counting events on processes, CPUs or a command, in groups
 *   prfile.h     reading perf.data files
 *   prwriter.h   writing perf.data files
 *   prmodel.h    the process model: mappings and threads from records
 *   prunwind.h   user stacks unwound with DWARF CFI
 *   prsym.h      names, inlined functions and source lines for frames
 *   prprofile.h  a profile in memory and the files it is written as
 *   prscript.h   samples written as perf script prints them, off-CPU
 *                samples when their waits end
 *   proutput.h   an output file: a profile or perf script's text, its
 *                format from its name, written whole or not at all
 *   prsession.h  the per-record path: records -> model -> unwinder ->
 *                sinks, on the caller's thread or on worker threads
 *   prquality.h  why stacks ended early and what nothing names, with
 *                what would fix it: a session's sink and its report
 *   prstat.h     counts printed as perf stat prints them
 *   prarchive.h  the files a capture's samples landed in, kept by build-id
 *                (perf's build-id cache, an archive) and read back
 *   prupload.h   a profile cut into windows, grouped and labelled, and
 *                shipped to a directory, Pyroscope or an OTLP endpoint
 *   prpython.h   CPython in a running process, and its perf trampoline
 *                turned on from outside
 *   prtrace.h    a tracepoint sample's fields, decoded with its format
 *
 * Conventions, kept by every function of every header:
 *
 *  - Names.  Every public name starts with `pr_` (macros `PR_`).  Functions
 *    are named object_verb: pr_reader_open_pids(), pr_unwinder_unwind(),
 *    pr_file_close(); an object is named as its struct is, so the pool of
 *    names symbolizers share (struct pr_sym_pool, an object of its own)
 *    has pr_sym_pool_new(); a getter is object_what (pr_dso_path()).
 *    pr_strerror() is the one exception, named after strerror(3).
 *
 *  - Errors.  A function returning int returns 0 (or a count, or another
 *    value its comment states) on success and a negative errno value on
 *    failure; errno is not used to say more.  A constructor (..._new,
 *    ..._open...) returns the object, or NULL with errno set to a positive
 *    errno value: there is no other way for it to say why.  pr_strerror()
 *    describes either.
 *
 *  - Logging.  The library never prints.  Diagnostics, including what to do
 *    when the kernel refuses (perf_event_paranoid, CAP_PERFMON,
 *    perf_event_mlock_kb), go to the log callback of the object's options
 *    struct (its `log` and `log_ctx` fields); without one they are dropped.
 *    Messages say what to do in terms of the options and the system, never
 *    a command line's flags: a program maps them to its own interface.
 *
 *  - Options.  Every options struct starts with `size_t sz`, which the
 *    caller sets to sizeof(the struct): declare it with PR_OPTS().  Fields
 *    the library does not know must be zero; fields the caller's older
 *    header does not have take their defaults.  A zero field means
 *    "default" unless stated otherwise.  A NULL options pointer means all
 *    defaults.  Stats structs work the same way: set `sz` before the call.
 *
 *  - NULL.  Destructors (..._free, ..._close) accept NULL and do nothing.
 *    Getters accept a NULL object and return what they return for "none":
 *    -EINVAL from one returning int, NULL, 0, false, or -1 for a pid or
 *    CPU, as each states.
 *
 *  - Ownership and lifetime.  Objects are opaque; the caller owns what a
 *    constructor returns and releases it with the matching destructor.  Every
 *    function returning a pointer (or filling a struct with pointers) says
 *    how long it stays valid: for as long as the object, until the next
 *    call on the object, until a callback returns, or forever (static
 *    strings).  The library never frees what the caller passed in, and
 *    copies what it keeps unless a comment says otherwise.
 *
 *  - Threads.  An object may be used from any thread, but from one at a
 *    time: nothing is thread-safe unless its comment says so.  Functions
 *    without an object (pr_strerror(), pr_event_attr(), the name lookups)
 *    are thread-safe.  Log callbacks run on the thread that made the call.
 *
 *  - SIGBUS.  Files are read through mappings (perf.data, ELF and debug
 *    files, address indexes from the cache).  A file cut short under one
 *    (truncate, a cp over it) makes a read past its new end a SIGBUS.  So
 *    the first mapping made installs a SIGBUS handler for the process: a
 *    fault in one of the library's mappings reads zeros instead, and the
 *    object that mapped it notices (a capture is read up to where it now
 *    ends, a file named again from what it holds).  Every other SIGBUS
 *    goes to the handler that was installed before, or to the default
 *    action.  A program that installs its own SIGBUS handler later should
 *    pass on, as this one does, the signals it does not expect.
 *
 * The headers are C99 and do not include <linux/perf_event.h>; include it
 * yourself before calling pr_event_attr() or reading a perf_event_attr.
 */
#ifndef PERFREADER_H
#define PERFREADER_H

#include "prcommon.h"
#include "prrecord.h"
#include "prorder.h"
#include "prevent.h"
#include "prreader.h"
#include "prcounter.h"
#include "prmodel.h"
#include "prfile.h"
#include "prwriter.h"
#include "prunwind.h"
#include "prsym.h"
#include "prprofile.h"
#include "prscript.h"
#include "proutput.h"
#include "prsession.h"
#include "prquality.h"
#include "prstat.h"
#include "prarchive.h"
#include "prupload.h"
#include "prpython.h"
#include "prtrace.h"

#endif /* PERFREADER_H */
