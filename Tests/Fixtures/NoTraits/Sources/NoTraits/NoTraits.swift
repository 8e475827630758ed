import ValueStore

/// A store of the dependent's, so the fixture builds something of the library.
let counter = ValueStore<Void, Int>.inMemory(0)
