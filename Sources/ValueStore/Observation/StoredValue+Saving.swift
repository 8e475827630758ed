// StoredValue's writes: values set through `value`, saved in the background and awaited by
// `flush()`, and the writes of `set(_:)` and `update(_:)`, which wait for them.

extension StoredValue {
    /// A set waiting for the writing task.
    enum PendingSet {
        /// A value to write.
        case write(Value)
        /// A set refused over data that could not be read, settled with this failure.
        case refused(any Error)
    }

    /// Returns once every value set through ``value`` before the call is durable: the write that
    /// holds the last of them, or a later value, has returned.
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { _, phase in
    ///     if phase == .background {
    ///         Task { try await settings.flush() }
    ///     }
    /// }
    /// ```
    ///
    /// Setting ``value`` shows the value at once and writes it in the background; values set
    /// while a write is in flight share the next write, so a burst of sets costs about two
    /// writes. Call `flush()` where the app may be suspended or terminated next (a scene moving
    /// to the background, `willResignActive`, before exiting a command-line tool), so that
    /// nothing set is lost.
    ///
    /// `flush()` waits for the writes in flight before it returns or throws, even when the last
    /// set was refused: a refused set settles after the write in flight, in order. Once it
    /// returns, ``isSaving`` is `false` unless a value was set since.
    ///
    /// - Throws: The failure of the write that held the last value set before the call, or the
    ///   failure to read that made this object refuse it (see ``StoredValue``).
    public func flush() async throws {
        let last = setsMade
        if settled.set >= last {
            if let failure = settled.failure, settled.set == last { throw failure }
            return
        }
        try await withCheckedThrowingContinuation { continuation in
            flushes.append((last, continuation))
        }
    }

    /// Keeps `newValue` as the one value waiting to be written, and starts the writing task if
    /// none runs.
    func saveInBackground(_ newValue: Value) {
        setsMade += 1
        pendingSave = (.write(newValue), setsMade)
        isSaving = true
        guard saving == nil else { return }
        writesInFlight += 1
        saving = Task { [weak self] in
            await self?.saveWhilePending()
        }
    }

    /// Counts a set refused over unreadable data, so that ``flush()`` reports the refusal: at
    /// once when no write is in flight, else after that write, in order, replacing a value set
    /// before it and not yet written (that value was shown, never stored).
    func refuseInTurn() {
        setsMade += 1
        guard saving != nil else {
            return settle(through: setsMade, refusal())
        }
        pendingSave = (.refused(refusal()), setsMade)
    }

    /// Writes the waiting value, the latest set, until none waits.
    private func saveWhilePending() async {
        while let (pending, set) = pendingSave {
            pendingSave = nil
            settle(through: set, await outcome(of: pending))
        }
        saving = nil
        await finishWrite()
    }

    /// Writes a set's value, unless it was refused or the store cannot be read now; returns the
    /// failure, or `nil` once the value is stored.
    private func outcome(of pending: PendingSet) async -> (any Error)? {
        // A refused set, or one made before the first load finished: nothing is written over
        // data that cannot be read.
        guard case .write(let newValue) = pending, await isWritable() else {
            current = lastKnown
            if case .refused(let refusal) = pending { return refusal }
            return refusal()
        }
        do {
            try await write(newValue)
            return nil
        } catch {
            // Recorded already: `write` sets `error` and shows what the store holds.
            return error
        }
    }

    /// Ends the wait of every ``flush()`` and write whose last set a write just held, or that
    /// was just refused: a wait for an earlier set was ended by an earlier write, so every one
    /// ended here had its value replaced by this one, and shares its outcome. Sets settle in
    /// order, so ``settled`` only moves forward; ``isSaving`` turns `false` here when no later
    /// set waits, before any flush it ends returns.
    private func settle(through set: Int, _ failure: (any Error)?) {
        guard set > settled.set else { return }
        settled = (set, failure)
        if set == setsMade {
            isSaving = false
        }
        let done = flushes.filter { $0.set <= set }
        flushes.removeAll { $0.set <= set }
        for flush in done {
            if let failure {
                flush.continuation.resume(throwing: failure)
            } else {
                flush.continuation.resume()
            }
        }
    }

    /// Waits until the values set before the call have been written, or their write failed
    /// (recorded in ``error``): not for values set after it, so a write in turn is never
    /// starved by a slider that keeps moving.
    private func backgroundSavesLanded() async {
        do {
            try await flush()
        } catch {
            // The background write's failure is shown in `error` already; the write in turn
            // decides for itself.
        }
    }

    /// Waits for the background saves queued before, then writes, unless now unreadable.
    func writeInTurn(_ newValue: Value) async throws {
        await backgroundSavesLanded()
        guard !unreadable else {
            current = lastKnown
            throw refusal()
        }
        try await write(newValue)
    }

    /// ``update(_:)`` once the background saves queued before have landed.
    func updateInTurn(_ body: (_ value: inout Value) throws -> Void) async throws {
        await backgroundSavesLanded()
        guard !unreadable else { throw refusal() }
        let defaultValue = defaultValue
        var bodyFailed = false
        let stored: Value?
        do {
            stored = try await store.update(()) { stored in
                var value = stored ?? defaultValue
                do {
                    try body(&value)
                } catch {
                    bodyFailed = true
                    throw error
                }
                stored = isNil(value) ? nil : value
            }
        } catch {
            if !bodyFailed {
                await writeFailed(error)
            }
            throw error
        }
        current = stored ?? defaultValue
        lastKnown = current
        succeeded()
    }

    /// Saves or removes `newValue`; a failure is recorded by ``writeFailed(_:)`` and thrown.
    private func write(_ newValue: Value) async throws {
        do {
            if isNil(newValue) {
                try await store.remove()
            } else {
                try await store.save(newValue)
            }
        } catch {
            await writeFailed(error)
            throw error
        }
        lastKnown = newValue
        succeeded()
    }

    /// Clears ``error`` after a write succeeded, unless a failure to read arrived meanwhile.
    private func succeeded() {
        if !unreadable {
            error = nil
        }
    }

    /// Records a write's failure: one that says the data could not be read makes the object
    /// unwritable; after any other, the store is read, and that read decides.
    private func writeFailed(_ failure: any Error) async {
        if isReadFailure(failure) {
            hasLoaded = true
            current = lastKnown
            showUnreadable(failure)
            return
        }
        // This read covers every state that arrived before it.
        missedState = false
        if let state = await readUnlessOutdated() {
            apply(state)
        }
        if error == nil {
            error = failure
        }
    }

    /// Runs `operation` as a write in flight, then ends it.
    func writing(_ operation: () async throws -> Void) async throws {
        writesInFlight += 1
        do {
            try await operation()
        } catch {
            await finishWrite()
            throw error
        }
        await finishWrite()
    }

    /// Ends a write; the last one reads the store again while states arrive during writes.
    private func finishWrite() async {
        while writesInFlight == 1 && missedState {
            missedState = false
            // A failure shown during the read set `missedState` again: read once more.
            guard let state = await readUnlessOutdated() else { continue }
            if writesInFlight == 1 {
                apply(state)
            } else {
                // A newer write started during the read: it reads again when it ends.
                writesInFlight -= 1
                receive(state)
                return
            }
        }
        writesInFlight -= 1
    }
}
