// The routes of a SyncHTTPService for a Hummingbird 2 app, with the `Hummingbird` trait.
#if Hummingbird
import Hummingbird
#endif
