/**
 * The facilitator's time source is the operator's: one Clock interface, one
 * system clock and one manual clock for tests serve both services (the claim
 * timestamp window, policy deadlines and token expiry compare against "now").
 */
export { type Clock, ManualClock, systemClock } from "../operator/clock";
