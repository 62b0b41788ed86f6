"""A library for measuring on a Ray cluster: the layer ``--executor=ray`` (the
``ray_executor`` plugin) and ``ireebench rank --executor=ray`` share.

* :mod:`.cluster`: the driver's side (the cluster reached, its nodes probed,
  the points sent, the rows back); the one module of the driver that imports
  Ray at its top, imported only when a run measures on a cluster;
* :mod:`.node`: what runs on a node (who it is, a point measured);
* :mod:`.resources`: the Ray resource a device asks for;
* :mod:`.shipping`: the modules and input files shipped through the object store;
* :mod:`.identity`: the driver's identity and environment a node must match.
"""
