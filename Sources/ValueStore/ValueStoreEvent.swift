import Synchronization

/// Something a store did that no caller can be told through an error, because no call is waiting
/// for it: a directory's watch lost and armed again, a PostgreSQL listening connection lost and
/// made again, a change a sync server refused.
///
/// The library depends on nothing, so it only reports these: ``report(_:)`` hands each event to
/// the handlers ``connect(_:)`` installed, and drops it when there is none (the default).
/// `ValueStoreObservability` connects it to the app's logger and metrics. Modules of this package
/// report from wherever the event happens:
///
/// ```swift
/// ValueStoreEvent.report(
///     ValueStoreEvent(
///         .listeningAgain, source: "PostgreSQL table 'app_values'",
///         message: "the listening connection was lost; listening again and reloading every observed key"))
/// ```
///
/// An event is meant for an operator's log, so it never carries a value, a decrypted byte, a key
/// an app's user chose, a password or a connection string: ``source`` names what the developer
/// set up (a directory, a table), and ``message`` says what happened and what the library does
/// about it. ``report(_:)`` may be called from any thread and while holding no lock of the
/// caller's that the handler could need; the handler runs on the reporter's thread, so it must be
/// quick and must not use a store.
package struct ValueStoreEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened, as a short camel-case name that logs and metrics carry as it is.
    package struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, such as `"watchLost"`.
        package var rawValue: String

        /// A kind with this name.
        package init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The kind's name.
        package var description: String { rawValue }

        /// A directory's watch stopped (the directory was deleted, moved away or replaced): it is
        /// armed again at once, or waits for the directory to appear, and every observed file in
        /// it is reloaded once it is watched.
        package static let watchLost = Self("watchLost")
        /// No watch could be made for a directory (no inotify watch left, no permission): only
        /// this process's writes are seen there, and the watch is tried again every few seconds.
        package static let watchUnavailable = Self("watchUnavailable")
        /// A directory that was not watched is watched again; its observed files are reloaded.
        package static let watchRestored = Self("watchRestored")
        /// A settings file's own watch was started again, its directory having been unwatched.
        package static let settingsWatchRestarted = Self("settingsWatchRestarted")
        /// A PostgreSQL listening connection was lost and listens again; every observed key is
        /// reloaded once, so a notification missed in between costs one reload.
        package static let listeningAgain = Self("listeningAgain")
        /// A PostgreSQL listening connection cannot be made; other machines' changes are not seen
        /// until it can, and it is tried again.
        package static let cannotListen = Self("cannotListen")
        /// A sync server refused a change this device made; the device's value is replaced by the
        /// server's.
        package static let changeRejected = Self("changeRejected")
    }

    /// How much an operator should care: ``info`` when the library recovered on its own,
    /// ``warning`` while changes may go unseen.
    package enum Severity: Sendable, Equatable {
        case info
        case warning
    }

    /// What happened.
    package var kind: Kind
    /// How much it matters.
    package var severity: Severity
    /// What it concerns, as the developer set it up: `"directory '/srv/app'"`,
    /// `"PostgreSQL table 'app_values'"`.
    package var source: String
    /// The directory it concerns, for an event about files; `nil` otherwise. A path may name a
    /// user (`/home/alice.smith/…`): telemetry names the stores in the directory instead, never
    /// the path, nor a ``source`` that carries one.
    package var directory: String?
    /// What happened and what the library does about it, in words.
    package var message: String

    /// An event.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - severity: How much it matters; by default ``Severity/info``.
    ///   - source: What it concerns: never a key an app's user chose.
    ///   - directory: The directory it concerns, for an event about files.
    ///   - message: What happened and what the library does about it: never a value, a secret or
    ///     a path.
    package init(
        _ kind: Kind, severity: Severity = .info, source: String, directory: String? = nil, message: String
    ) {
        self.kind = kind
        self.severity = severity
        self.source = source
        self.directory = directory
        self.message = message
    }

    /// "watchLost in directory '/srv/app': …".
    package var description: String { "\(kind) in \(source): \(message)" }

    /// What receives the events.
    package typealias Handler = @Sendable (_ event: ValueStoreEvent) -> Void

    /// A handler connected by ``connect(_:)``, until ``disconnect()``.
    package struct Connection: Sendable {
        let id: Int

        /// Stops the handler from receiving events.
        package func disconnect() {
            ValueStoreEvent.handlers.withLock { _ = $0.handlers.removeValue(forKey: id) }
        }
    }

    private static let handlers = Mutex<(next: Int, handlers: [Int: Handler])>((0, [:]))

    /// Makes `handler` receive every event from now on, beside the handlers connected before.
    ///
    /// - Parameter handler: Receives each event on the reporter's thread.
    /// - Returns: The connection, to disconnect the handler.
    @discardableResult
    package static func connect(_ handler: @escaping Handler) -> Connection {
        handlers.withLock { state in
            defer { state.next += 1 }
            state.handlers[state.next] = handler
            return Connection(id: state.next)
        }
    }

    /// Hands `event` to every connected handler; without one, it is dropped.
    ///
    /// - Parameter event: What happened.
    package static func report(_ event: ValueStoreEvent) {
        let handlers = Self.handlers.withLock { Array($0.handlers.values) }
        for handler in handlers {
            handler(event)
        }
    }
}
