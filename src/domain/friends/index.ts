// Friendship: the requests, answers and removals of the state machine, and the viewer's lists.
export { removeFriend, requestFriendship, respondToFriendship } from './friendship.ts'
export { listFriendRequests, listFriends } from './lists.ts'
