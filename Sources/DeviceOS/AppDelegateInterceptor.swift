import Foundation

/// What a framework in the app hooks into the app delegate, as FirebaseAuth does through
/// GoogleUtilities (`GULAppDelegateSwizzler.registerAppDelegateInterceptor(_:)`, which takes any
/// `UIApplicationDelegate` and does not retain it): the OS's registration outcome, remote
/// notifications and opened URLs reach every interceptor the ``AppHost`` has.
///
/// `Auth` is the interceptor here. The device knows only this protocol, so the SDK's module sits
/// above the device's, as FirebaseAuth sits above UIKit.
package protocol AppDelegateInterceptor: AnyObject, Sendable {
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    func application(_ application: AppHost, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)`.
    func application(_ application: AppHost, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` as FirebaseAuth answers
    /// it: whether the notification was its own.
    func canHandleNotification(_ userInfo: [AnyHashable: Any]) -> Bool
    /// `application(_:open:options:)`, with the reason a URL was not taken.
    func handle(_ url: URL) -> URLHandling
    /// The OS killed the app's process. (No such callback exists on iOS, where the process simply
    /// ends; the simulation needs it so that the dead process's waits end and it sends nothing more.)
    func processWasKilled()
}
