/** The change feed: list changes and resource updates heard by every node. */
export {
  type ChangedList,
  type ChangeEvent,
  type ChangeFeed,
  changeEventOf,
  MAX_CHANGE_URI_LENGTH,
  MemoryChangeFeed,
  tellListeners,
} from "./change-feed.js";
