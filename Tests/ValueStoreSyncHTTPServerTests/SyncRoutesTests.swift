// The Hummingbird routes' tests, with the `Hummingbird` trait.
#if Hummingbird
import Hummingbird
#endif
