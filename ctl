nodes
