"""A library for measuring on a Ray cluster, shared by ``--executor=ray`` (the
``ray_executor`` plugin) and ``ireebench rank --executor=ray``: the driver
(:mod:`.cluster`, the one that imports Ray), the node's side (:mod:`.node`), a
device's resource (:mod:`.resources`), the files shipped (:mod:`.shipping`) and
the identity a node must share (:mod:`.identity`)."""
